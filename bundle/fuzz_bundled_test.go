package bundle

import (
	"bytes"
	"io"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"

	"github.com/goffload/goffload/internal/tooltest"
)

// rules are a release of each bundle ID rule: 19's (any ID) and 22's.
var rules = []*release.Release{mustRelease(19), mustRelease(22)}

func mustRelease(n int) *release.Release {
	r, err := release.Lookup(n)
	if err != nil {
		panic(err)
	}
	return r
}

// FuzzParseID: any ID parses or is refused, never a panic; a parsed ID is
// compatible with itself as a target written in the standard form.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "host-x86_64-pc-linux-gnu-", "openmp-x86_64-pc-linux-gnu",
		"hip-amdgcn-amd-amdhsa-gfx90a", "-", "", "a-b-c-d-e-f-g", "x-:", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:xnack-"} {
		f.Add(s, "hip-amdgcn-amd-amdhsa--gfx90a")
	}
	f.Fuzz(func(t *testing.T, have, want string) {
		for _, rule := range rules {
			h, err1 := ParseID(have, rule)
			w, err2 := ParseTarget(want, rule)
			if err1 != nil || err2 != nil {
				continue
			}
			Compatible(h, w, false)
			Compatible(h, w, true)
			h.Image(ContentsELF, release.Default())
			DeviceMemberName(want, have, h.TargetID)
		}
	})
}

// FuzzObjectEntries: the bundle entries of any ELF input, or an error,
// within tooltest.CheckAllocs's bound.
func FuzzObjectEntries(f *testing.F) {
	f.Add(objectWithSection(f, SectionPrefix+"hip-amdgcn-amd-amdhsa--gfx90a", []byte("BC\xc0\xde")))
	f.Add(objectWithSection(f, SectionPrefix+"host-x86_64-pc-linux-gnu", []byte{0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var es []ObjectEntry
		var err error
		tooltest.CheckAllocs(t, len(data), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			var ef *elfobj.File
			if ef, err = elfobj.Read(bytes.NewReader(data), int64(len(data))); err == nil {
				es, err = ObjectEntries(ef)
			}
		})
		if err != nil {
			return
		}
		for i := range es {
			if es[i].Offset+es[i].Size > uint64(len(data)) && es[i].Size > 0 {
				t.Fatalf("entry %d past the input", i)
			}
			io.Copy(io.Discard, es[i].Open())
		}
	})
}

// FuzzDeviceArchive: a device archive of any archive, or an error, made
// and written within tooltest.CheckAllocs's bound.
func FuzzDeviceArchive(f *testing.F) {
	obj := objectWithSection(f, SectionPrefix+"hip-amdgcn-amd-amdhsa--gfx90a", []byte("BC\xc0\xde"))
	var lib bytes.Buffer
	ar.WriteGNU(&lib, []ar.NewMember{{Name: "k.o", Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(obj), 0, int64(len(obj)))}})
	f.Add(lib.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, major := range []int{19, 22} {
			rel, _ := release.Lookup(major)
			tooltest.CheckAllocs(t, len(data), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
				if d, err := deviceArchive(data, "hip-amdgcn-amd-amdhsa--gfx90a", ArchiveOptions{Release: rel}); err == nil {
					d.Write(io.Discard)
				}
			})
		}
	})
}
