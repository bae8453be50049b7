package coffobj

import (
	"bytes"
	"errors"
	"testing"
)

func TestRemoveSection(t *testing.T) {
	o := &Object{Machine: MachineAMD64}
	text := &Section{Name: ".text", Characteristics: IMAGE_SCN_CNT_CODE | IMAGE_SCN_MEM_EXECUTE | IMAGE_SCN_MEM_READ, Align: 16, Data: make([]byte, 16)}
	data := &Section{Name: ".data", Characteristics: IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ | IMAGE_SCN_MEM_WRITE, Align: 8, Data: make([]byte, 8)}
	local := &Section{Name: ".rdata", Characteristics: IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ, Align: 8, Data: make([]byte, 8)}
	dev := &Section{Name: ".llvm.offloading", Characteristics: IMAGE_SCN_LNK_REMOVE | IMAGE_SCN_MEM_DISCARDABLE, Align: 8, Data: make([]byte, 8)}
	for _, s := range []*Section{text, data, local, dev} {
		o.AddSection(s, nil)
	}
	g := &Symbol{Name: "g", Section: data, StorageClass: IMAGE_SYM_CLASS_EXTERNAL}
	label := &Symbol{Name: "$L", Section: local, StorageClass: IMAGE_SYM_CLASS_STATIC}
	o.Symbols = append(o.Symbols, g, label)
	text.Relocs = []Reloc{{Offset: 0, Type: IMAGE_REL_AMD64_ADDR64, Symbol: label}}

	if err := o.RemoveSection(data); !errors.Is(err, ErrInUse) {
		t.Errorf("removing a section defining an external symbol: %v, want ErrInUse", err)
	}
	if err := o.RemoveSection(local); !errors.Is(err, ErrInUse) {
		t.Errorf("removing a section another's relocation refers to: %v, want ErrInUse", err)
	}
	if len(o.Sections) != 4 || len(o.Symbols) != 6 {
		t.Fatalf("a refused removal changed the object: %d sections, %d symbols", len(o.Sections), len(o.Symbols))
	}
	if err := o.RemoveSection(dev); err != nil {
		t.Fatal(err)
	}
	if o.Section(".llvm.offloading") != nil || o.Symbol(".llvm.offloading") != nil || len(o.Symbols) != 5 {
		t.Errorf("after removing .llvm.offloading: sections %v, %d symbols", o.Sections, len(o.Symbols))
	}
	if err := o.RemoveSection(dev); err == nil {
		t.Error("removing a section twice succeeded")
	}
	var b bytes.Buffer
	if _, err := Write(&b, o); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sections) != 3 {
		t.Errorf("written with %d sections, want 3", len(f.Sections))
	}
}
