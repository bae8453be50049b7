package offload

import "sort"

// stringTable is the output of LLVM's StringTableBuilder(ELF) after finalize()
// (spec §1.4): a leading NUL, then the distinct non-empty strings sorted by their
// reversed bytes in descending order, each one that is a suffix of the string
// written just before it sharing that string's tail.
type stringTable struct {
	data []byte
	off  map[string]uint64
}

func buildStringTable(strs []string) stringTable {
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
	return stringTable{data: data, off: off}
}

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
