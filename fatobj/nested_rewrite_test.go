package fatobj

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/release"
)

// gnuArchive returns a GNU archive of the members, in order.
func gnuArchive(t *testing.T, names []string, datas [][]byte) []byte {
	t.Helper()
	var ms []ar.NewMember
	for i, n := range names {
		ms = append(ms, ar.NewMember{Name: n, Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(datas[i]), 0, int64(len(datas[i])))})
	}
	var b bytes.Buffer
	if err := ar.WriteGNU(&b, ms); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRewriteRefusesNestedDeviceCode (issue 33, B3): converting or
// stripping an archive whose member is an archive holding a clang-15
// object with device code used to copy the inner archive unconverted and
// report no error; both now refuse it (goffload.ErrUnsupported), naming the
// object, and write nothing. An inner archive without device code is still
// copied.
func TestRewriteRefusesNestedDeviceCode(t *testing.T) {
	obj, err := os.ReadFile("../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o")
	if err != nil {
		t.Fatal(err)
	}
	inner := gnuArchive(t, []string{"k.o"}, [][]byte{obj})
	plain := gnuArchive(t, []string{"notes.txt"}, [][]byte{[]byte("no device code\n")})
	r22, _ := release.Lookup(22)
	open := func(data []byte) *File {
		t.Helper()
		f, err := NewFile("lib.a", bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	outer := gnuArchive(t, []string{"top.o", "inner.a"}, [][]byte{obj, inner})
	var w bytes.Buffer
	_, err = ConvertFile(&w, open(outer), nil, r22)
	if !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "lib.a(inner.a)(k.o)") {
		t.Errorf("ConvertFile of a nested archive with device code: %v, want it refused naming the object", err)
	}
	if w.Len() != 0 {
		t.Errorf("ConvertFile wrote %d bytes", w.Len())
	}
	keep := []Target{{Triple: "x86_64-pc-linux-gnu"}}
	if _, err := StripFile(&w, open(outer), keep); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("StripFile of a nested archive with device code: %v, want it refused", err)
	}
	ok := gnuArchive(t, []string{"top.o", "plain.a"}, [][]byte{obj, plain})
	w.Reset()
	if _, err := ConvertFile(&w, open(ok), nil, r22); err != nil {
		t.Fatalf("ConvertFile with a nested archive without device code: %v", err)
	}
	if !bytes.Contains(w.Bytes(), plain) {
		t.Errorf("the inner archive without device code is not copied as it is")
	}
}
