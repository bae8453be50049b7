package machoobj_test

import (
	"bytes"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
)

// FuzzRead reads any input as a Mach-O file, its symbols, relocations,
// data-in-code records and hints, loads it as an Object and writes that:
// never a panic, and memory linear in the input's size.
func FuzzRead(f *testing.F) {
	f.Add(sample(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		tooltest.CheckAllocs(t, len(b), 64, 8<<20, func() {
			mf, err := machoobj.Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				return
			}
			mf.Symbols()
			for _, s := range mf.Sections {
				mf.Relocations(s)
			}
			mf.DataInCode()
			mf.HintData()
			o, err := mf.Object()
			if err != nil {
				return
			}
			var out bytes.Buffer
			machoobj.Write(&out, o)
		})
	})
}
