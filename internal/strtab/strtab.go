// Package strtab builds ELF-style string tables the way LLVM's
// StringTableBuilder(ELF) does after finalize(): a leading NUL, then the
// distinct non-empty strings sorted by their reversed bytes in descending
// order, each string that is a suffix of the string written just before it
// sharing that string's tail. The empty string is at offset 0.
//
// Both the OffloadBinary string table (docs/offload-binary.md#string-table) and
// ELF .strtab/.shstrtab sections use it.
package strtab

import "sort"

// Table is a built string table.
type Table struct {
	Data []byte
	off  map[string]uint64
}

// Build returns the table of strs (duplicates and the empty string allowed).
func Build(strs []string) Table {
	off := make(map[string]uint64, len(strs))
	uniq := make([]string, 0, len(strs))
	for _, s := range strs {
		if _, ok := off[s]; !ok && s != "" {
			off[s] = 0
			uniq = append(uniq, s)
		}
	}
	sort.Slice(uniq, func(i, j int) bool { return tailGreater(uniq[i], uniq[j]) })
	data := []byte{0}
	prev := ""
	for _, s := range uniq {
		if len(prev) >= len(s) && prev[len(prev)-len(s):] == s {
			off[s] = uint64(len(data) - len(s) - 1)
			continue
		}
		off[s] = uint64(len(data))
		data = append(data, s...)
		data = append(data, 0)
		prev = s
	}
	off[""] = 0
	return Table{Data: data, off: off}
}

// Offset returns the offset of s, which must be one of the strings the table
// was built from, or the empty string.
func (t *Table) Offset(s string) uint64 { return t.off[s] }

// Has reports whether s is in the table.
func (t *Table) Has(s string) bool { _, ok := t.off[s]; return ok }

// tailGreater compares a and b from their last byte backwards; a string that
// runs out first is the smaller.
func tailGreater(a, b string) bool {
	i, j := len(a)-1, len(b)-1
	for ; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if a[i] != b[j] {
			return a[i] > b[j]
		}
	}
	return i >= 0 && j < 0
}
