package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	const (
		llvm15 = "../../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o"
		llvm22 = "../../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o"
		mixing = "../../entries/testdata/mixing/"
		binary = "../../offload/testdata/llvm/packager/multi-llvm22.bin"
	)
	for _, tc := range []struct {
		paths []string
		want  []string // the kinds of the findings, in order
	}{
		{[]string{llvm15}, nil},
		{[]string{llvm22}, nil},
		{[]string{llvm15, llvm22}, []string{llvm22 + ": mixed-entry-layouts"}},
		{[]string{mixing + "same19"}, nil},
		{[]string{mixing + "m19by22.strip"}, []string{mixing + "m19by22.strip: unregistered-entries"}},
		{[]string{mixing + "p22w22rt19"}, []string{mixing + "p22w22rt19: runtime-entry-layout"}},
		{[]string{binary}, nil}, // nothing to check
	} {
		var out bytes.Buffer
		n, err := run(&out, tc.paths)
		if err != nil {
			t.Fatalf("check %v: %v", tc.paths, err)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line != "" {
				// "<object>: <kind>: <message>"
				obj, rest, _ := strings.Cut(line, ": ")
				kind, _, _ := strings.Cut(rest, ":")
				got = append(got, obj+": "+kind)
			}
		}
		if n != len(got) || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("check %v: %d findings\n%s\nwant the kinds %q", tc.paths, n, out.String(), tc.want)
		}
	}
	if _, err := run(&bytes.Buffer{}, []string{"../../offload/testdata/llvm/img1.bin"}); err == nil {
		t.Error("check img1.bin, no file of device code, gave no error")
	}
}
