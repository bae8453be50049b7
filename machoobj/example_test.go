package machoobj_test

import (
	"bytes"
	"fmt"

	"github.com/goffload/goffload/machoobj"
)

// An object of one data section and one external symbol, for an arm64
// macOS host, written and read back.
func Example() {
	o, err := machoobj.ForTriple("arm64-apple-macos11")
	if err != nil {
		fmt.Println(err)
		return
	}
	data := &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 8, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	o.Sections = append(o.Sections, data)
	o.Symbols = append(o.Symbols, &machoobj.Symbol{Name: "_table", Type: machoobj.N_SECT | machoobj.N_EXT, Section: data})
	var b bytes.Buffer
	if _, err := machoobj.Write(&b, o); err != nil {
		fmt.Println(err)
		return
	}
	f, err := machoobj.Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	syms, _ := f.Symbols()
	s := f.Section("__DATA", "__data")
	fmt.Println(f.Cpu, f.Version().Min>>16, s.Size, syms[0].Name)
	// Output: CpuArm64 11 8 _table
}
