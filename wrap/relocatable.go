package wrap

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"
)

// RelocatableSuffix is the suffix LLVM gives the entries section of a
// relocatable link's output (docs/registration.md#relocatable-link): "_" and
// the lower-case hex, without leading zeros, of the first eight bytes of the
// MD5 of the merged object read as a little-endian number. The object is read
// once, as a stream.
func RelocatableSuffix(merged io.Reader) (string, error) {
	h := md5.New()
	if _, err := io.Copy(h, merged); err != nil {
		return "", err
	}
	var sum [md5.Size]byte
	h.Sum(sum[:0])
	return digestSuffix(sum), nil
}

func digestSuffix(sum [md5.Size]byte) string {
	return "_" + strconv.FormatUint(binary.LittleEndian.Uint64(sum[:8]), 16)
}

// FinishRelocatable does to o, the output of `ld -r` over host objects and a
// relocatable wrapper, what LLVM 19 and later do with llvm-objcopy
// (docs/registration.md#relocatable-link): it removes the inputs'
// .llvm.offloading sections and renames the release's entries sections and
// their __start_/__stop_ symbols with suffix, so that this object's constructor
// registers only its own entries when it is linked with others.
func FinishRelocatable(o *elfobj.Object, r *release.Release, suffix string) error {
	if r.Wrapper.RelocatableSection == "" {
		return fmt.Errorf("wrap: %v has no relocatable offloading link: %w", r, goffload.ErrUnsupported)
	}
	for _, s := range append([]*elfobj.Section(nil), o.Sections...) {
		if s.Name == ".llvm.offloading" {
			if err := o.RemoveSection(s); err != nil {
				return err
			}
		}
	}
	for _, name := range r.Wrapper.RelocatableRenames {
		if s := o.Section(name); s != nil {
			o.RenameSection(s, name+suffix)
		}
		o.RenameSymbols("__start_"+name, "__start_"+name+suffix)
		o.RenameSymbols("__stop_"+name, "__stop_"+name+suffix)
	}
	return nil
}
