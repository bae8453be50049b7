package elfobj

import (
	"debug/elf"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
)

// dynSize is the size of an Elf64_Dyn.
const dynSize = 16

// Needed returns the shared objects the file needs, in the order of its
// dynamic section's DT_NEEDED tags (names such as "libomptarget.so.19.1"), or
// nil if it has no SHT_DYNAMIC section. The section is read up to its
// DT_NULL; each name comes from the string table the section links to.
func (f *File) Needed() ([]string, error) {
	dyns := f.SectionsByType(elf.SHT_DYNAMIC)
	if len(dyns) == 0 {
		return nil, nil
	}
	dyn := dyns[0]
	if dyn.FileSize%dynSize != 0 {
		return nil, formatErr(int64(dyn.Offset), "dynamic section %q: size %d is not a multiple of %d", dyn.Name, dyn.FileSize, dynSize)
	}
	strs, err := f.section(dyn.Link, "dynamic section "+dyn.Name)
	if err != nil {
		return nil, err
	}
	data, err := dyn.Data()
	if err != nil {
		return nil, err
	}
	var names string // read when the first DT_NEEDED is found
	var read bool
	var out []string
	for i := 0; i+dynSize <= len(data); i += dynSize {
		tag, val := elf.DynTag(f.order.Uint64(data[i:])), f.order.Uint64(data[i+8:])
		if tag == elf.DT_NULL {
			break
		}
		if tag != elf.DT_NEEDED {
			continue
		}
		if !read {
			b, err := strs.Data()
			if err != nil {
				return nil, err
			}
			names, read = string(b), true
		}
		if val >= uint64(len(names)) || val > 1<<32-1 {
			return nil, formatErr(int64(dyn.Offset)+int64(i), "DT_NEEDED name at %d past the %d bytes of %q", val, len(names), strs.Name)
		}
		name, err := cString(names, uint32(val))
		if err != nil {
			return nil, formatErr(int64(dyn.Offset)+int64(i), "DT_NEEDED: %v", err)
		}
		if !f.refs.Take(uint64(len(name))) {
			return nil, elfErr(int64(dyn.Offset)+int64(i), goffload.ErrLimit, "DT_NEEDED: the names up to it take more than %d times the file's %d bytes plus %d", budget.Factor, f.size, budget.Slack)
		}
		out = append(out, name)
	}
	return out, nil
}
