package fatobj

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/offloadbinary"
)

// sharedNameArchive is a GNU archive of n empty members whose headers all
// name one long name of l bytes.
func sharedNameArchive(n, l int) []byte {
	var b bytes.Buffer
	b.WriteString("!<arch>\n")
	names := strings.Repeat("n", l) + "/\n"
	fmt.Fprintf(&b, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "//", "0", "0", "0", "644", len(names))
	b.WriteString(names)
	if b.Len()%2 == 1 {
		b.WriteByte('\n')
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "/0", "0", "0", "0", "644", 0)
	}
	return b.Bytes()
}

// TestNamesBoundedPerCommand: an archive whose member names take most of
// what one file may reference (16 times it plus 1 MiB) opens alone, but
// ten of them read within one budget, as one command reads them, are
// refused: the 1 MiB is the command's, not each file's.
func TestNamesBoundedPerCommand(t *testing.T) {
	a := sharedNameArchive(300, 4000) // 22 KB; 1.2 MB of names
	refs := uint64(300 * 4000)
	if alone := budget.Linear(uint64(len(a))); refs > alone || refs < alone*3/4 {
		t.Fatalf("the archive references %d bytes, not just under one file's bound %d", refs, alone)
	}
	if _, err := NewFile("a.a", bytes.NewReader(a), int64(len(a)), nil); err != nil {
		t.Fatalf("one archive: %v", err)
	}
	g := &offloadbinary.Budget{}
	var err error
	opened := 0
	for i := 0; i < 10 && err == nil; i++ {
		if _, err = NewFile("a.a", bytes.NewReader(a), int64(len(a)), &offloadbinary.ReadOptions{Budget: g}); err == nil {
			opened++
		}
	}
	if !errors.Is(err, goffload.ErrLimit) {
		t.Fatalf("ten archives in one budget: %d opened, error %v; want one matching ErrLimit", opened, err)
	}
	if want := int(budget.Linear(10*uint64(len(a))) / refs); opened > want {
		t.Errorf("%d archives opened, more than the %d that 16 times their bytes plus 1 MiB allow", opened, want)
	}
	t.Logf("%d opened, then: %v", opened, err)
}
