package fatobj

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/release"
)

// StripResult is what [StripFile] did to one object.
type StripResult struct {
	Object *Object
	Stripped
}

// StripFile writes to w the object f, or the archive f with each of its
// relocatable object members, keeping only the device code for the
// targets ([Strip] for ELF, [StripCOFF] for the COFF objects of Windows
// hosts, each object as its Release). A PE image is refused (strip the
// objects it was linked from). An archive is written in
// GNU format with the same members, names, headers and symbol index;
// members without device code, and those that are no relocatable object,
// are copied as they are. goffload does not rewrite LLVM bitcode (`clang
// -flto`): a bitcode object whose device code is all for the targets kept
// is copied as it is, one with device code for others is refused with an
// error matching goffload.ErrUnsupported. A target that matches no image of f is an error
// (a typing error there would drop all device code), and then nothing is
// written to w; so is a thin archive (give the files it names), an archive
// inside the archive that holds device code, and a file of another format. It returns what it did to each object with device
// code.
func StripFile(w io.Writer, f *File, keep []Target) ([]StripResult, error) {
	var out []StripResult
	matched := make([]bool, len(keep))
	keepBitcode := func(obj *Object) error {
		if err := keepsBitcode(obj, keep, matched); err != nil || len(obj.Binaries) == 0 {
			return err
		}
		out = append(out, StripResult{Object: obj, Stripped: Stripped{Kept: len(obj.Binaries)}})
		return nil
	}
	strip := func(obj *Object) (rewritten, error) {
		var st Stripped
		var w rewritten
		if obj.COFF != nil {
			o, err := obj.COFF.Object()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", obj.Name, err)
			}
			st, err = StripCOFF(o, obj.Release, keep)
			if err == ErrNoOffloading {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", obj.Name, err)
			}
			w = coffRewrite(o)
		} else {
			o, err := obj.ELF.Object()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", obj.Name, err)
			}
			st, err = Strip(o, obj.Release, keep)
			if err == ErrNoOffloading {
				return nil, nil
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", obj.Name, err)
			}
			w = elfRewrite(o)
		}
		for i, m := range st.Matched {
			matched[i] = matched[i] || m
		}
		out = append(out, StripResult{Object: obj, Stripped: st})
		return w, nil
	}
	check := func() error {
		for i, m := range matched {
			if !m {
				return fmt.Errorf("%s: target %s matches no device image (nothing written)", f.Name, keep[i])
			}
		}
		return nil
	}
	switch f.Format {
	case FormatArchive:
		return out, rewriteArchive(w, f, func(_ string, obj *Object) (rewritten, error) {
			if obj != nil && obj.Format == FormatBitcode {
				return nil, keepBitcode(obj)
			}
			if obj == nil || !relocatable(obj) {
				return nil, nil
			}
			return strip(obj)
		}, check)
	case FormatBitcode:
		if err := keepBitcode(f.Objects[0]); err != nil {
			return nil, err
		}
		if err := check(); err != nil {
			return nil, err
		}
		return out, writeObject(w, f, nil)
	case FormatELF, FormatCOFF:
		obj := f.Objects[0]
		if obj.COFF != nil && obj.COFF.Image {
			return nil, fmt.Errorf("%s: a PE image: strip the objects it was linked from: %w", f.Name, goffload.ErrUnsupported)
		}
		o, err := strip(obj)
		if err != nil {
			return nil, err
		}
		if err := check(); err != nil {
			return nil, err
		}
		return out, writeObject(w, f, o)
	}
	return nil, notRewritable(f)
}

// rewritten writes a rewritten object, returning the bytes written.
type rewritten func(w io.Writer) (int64, error)

func elfRewrite(o *elfobj.Object) rewritten {
	if o == nil {
		return nil
	}
	return func(w io.Writer) (int64, error) { return elfobj.Write(w, o) }
}

func coffRewrite(o *coffobj.Object) rewritten {
	return func(w io.Writer) (int64, error) { return coffobj.Write(w, o) }
}

// relocatable reports whether obj is a relocatable ELF or COFF object.
func relocatable(obj *Object) bool {
	return obj.ELF != nil && obj.ELF.Type == elf.ET_REL || obj.COFF != nil && !obj.COFF.Image
}

// keepsBitcode checks that every device image of obj, a bitcode object, is
// for one of the targets (marking them in matched): goffload does not
// rewrite bitcode, it copies it as it is.
func keepsBitcode(obj *Object, keep []Target, matched []bool) error {
	for _, im := range obj.Images {
		kept := false
		for j, t := range keep {
			if t.keeps(&im.Image) {
				matched[j], kept = true, true
			}
		}
		if !kept {
			return fmt.Errorf("%s: LLVM bitcode with device code for %s (arch %q), which is not kept: goffload does not rewrite bitcode: %w", obj.Name, im.Triple(), im.Arch(), goffload.ErrUnsupported)
		}
	}
	return nil
}

// writeObject writes o, the rewritten object of f, to w, or f's bytes as they
// are when o is nil.
func writeObject(w io.Writer, f *File, o rewritten) error {
	if o == nil {
		_, err := io.Copy(w, f.Objects[0].Open())
		return err
	}
	_, err := o(w)
	return fromInput(f.Name, err)
}

// String returns "kept K, dropped D device binaries".
func (s Stripped) String() string {
	return fmt.Sprintf("kept %d, dropped %d device binaries", s.Kept, s.Dropped)
}

// String returns "TRIPLE" or "TRIPLE:ARCH".
func (t Target) String() string {
	if t.Arch == "" {
		return t.Triple
	}
	return t.Triple + ":" + t.Arch
}

// ConvertResult is what [ConvertFile] did to one object.
type ConvertResult struct {
	Object *Object
	// Name is the object's name, or that of an archive member that is no
	// ELF object (Object then nil or not ELF, and the member is copied).
	Name string
	// From is the release the object was converted from ([MadeBy], or the
	// one given) and Made the releases that made it (0 when From was
	// given); From is nil for an object that holds nothing that differs
	// between releases.
	From *release.Release
	Made release.Set
	// Conversion is what was changed; nil or unchanged for an object
	// written as it is.
	Conversion *Conversion
}

// ConvertFile writes to w the relocatable object f, or the archive f with
// each of its object members, converted from the formats of the LLVM
// release that made it (from, or told from each object by [MadeBy]) into
// those of release to ([Convert]). An archive is written in GNU format with
// the same members, names, headers and symbol index; members that are no
// object, and objects in to's formats already, are copied byte for byte.
// An executable or shared object is refused (convert the objects it was
// linked from), as are a thin archive, an archive inside the archive that
// holds device code (extract it, convert it and put it back; one without
// is copied) and files of other formats. LLVM
// bitcode (`clang -flto`) that holds device code is refused with an error
// matching goffload.ErrUnsupported (goffload does not rewrite IR: compile
// it with the release wanted); bitcode without device code is copied.
func ConvertFile(w io.Writer, f *File, from, to *release.Release) ([]ConvertResult, error) {
	var out []ConvertResult
	conv := func(obj *Object) (*elfobj.Object, error) {
		if obj.ELF.Type != elf.ET_REL {
			return nil, fmt.Errorf("%s: a %v file: convert the relocatable objects it was linked from", obj.Name, obj.ELF.Type)
		}
		res := ConvertResult{Object: obj, Name: obj.Name, From: from}
		if from == nil {
			var err error
			if res.From, res.Made, err = obj.MadeBy(); err != nil {
				return nil, fmt.Errorf("%s: %w (give the release it was made by)", obj.Name, err)
			}
		}
		if res.From == nil {
			out = append(out, res)
			return nil, nil
		}
		o, err := obj.ELF.Object()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", obj.Name, err)
		}
		if res.Conversion, err = Convert(o, res.From, to); err != nil {
			return nil, fmt.Errorf("%s: %w", obj.Name, err)
		}
		out = append(out, res)
		if !res.Conversion.Changed() {
			return nil, nil
		}
		return o, nil
	}
	switch f.Format {
	case FormatBitcode:
		if len(f.Objects[0].Binaries) > 0 {
			return nil, convertsNoBitcode(f.Objects[0])
		}
		out = append(out, ConvertResult{Object: f.Objects[0], Name: f.Objects[0].Name})
		return out, writeObject(w, f, nil)
	case FormatArchive:
		err := rewriteArchive(w, f, func(name string, obj *Object) (rewritten, error) {
			if obj != nil && obj.Format == FormatBitcode && len(obj.Binaries) > 0 {
				return nil, convertsNoBitcode(obj)
			}
			if obj == nil || obj.ELF == nil {
				out = append(out, ConvertResult{Object: obj, Name: name})
				return nil, nil
			}
			o, err := conv(obj)
			return elfRewrite(o), err
		}, nil)
		return out, err
	case FormatELF:
		obj := f.Objects[0]
		o, err := conv(obj)
		if err != nil {
			return nil, err
		}
		return out, writeObject(w, f, elfRewrite(o))
	}
	return nil, notRewritable(f)
}

// convertsNoBitcode is the error of converting a bitcode object with
// device code.
func convertsNoBitcode(obj *Object) error {
	return fmt.Errorf("%s: LLVM bitcode with device code: its offload entries and binaries are IR, which goffload does not rewrite (compile it with the release wanted): %w", obj.Name, goffload.ErrUnsupported)
}

func notRewritable(f *File) error {
	switch f.Format {
	case FormatThinArchive:
		return fmt.Errorf("%s: a thin archive: give the member files themselves: %w", f.Name, goffload.ErrUnsupported)
	case FormatMachO:
		return fmt.Errorf("%s: a Mach-O file: strip and convert rewrite ELF and COFF objects only: %w", f.Name, goffload.ErrUnsupported)
	}
	return fmt.Errorf("%s: %v, not an object or an archive: %w", f.Name, f.Format, goffload.ErrUnsupported)
}

// fromInput names the input an object was loaded from in an error of
// writing it that says the object is inconsistent, or that data read from
// the input as it is written is bad (a compressed binary inflated as it is
// written again): its fault, not the output's.
func fromInput(in string, err error) error {
	if err != nil && in != "" && (errors.Is(err, elfobj.ErrInconsistent) || errors.Is(err, coffobj.ErrInconsistent) ||
		errors.Is(err, goffload.ErrInvalid) || errors.Is(err, goffload.ErrTruncated) || errors.Is(err, goffload.ErrLimit)) {
		return fmt.Errorf("%s: %w", in, err)
	}
	return err
}

// rewriteArchive writes to w a GNU archive with the members, names, headers
// and symbol index of the archive f, each member replaced by the object
// member returns for it (nil: the member as it is); member is given the
// member's object, nil for a member that is none. The rewritten members go
// one after the other into one scratch file, so that an archive of any
// number of members takes one descriptor. check, when not nil, runs before
// anything is written.
func rewriteArchive(w io.Writer, f *File, member func(name string, obj *Object) (rewritten, error), check func() error) error {
	a := f.archive
	if a == nil {
		return notRewritable(f)
	}
	syms, err := a.Symbols()
	if err != nil {
		return &ferr.InFile{Name: f.Name, Err: err}
	}
	bySym := map[int][]string{}
	for _, s := range syms {
		bySym[s.Member] = append(bySym[s.Member], s.Name)
	}
	byOffset := map[int64]*Object{}
	for _, o := range f.Objects {
		byOffset[o.Offset] = o
	}
	nested := nestedOffload(f)
	scratch, err := atomicfile.Scratch()
	if err != nil {
		return err
	}
	defer scratch.Close()
	var end int64 // of the scratch file's contents
	var members []ar.NewMember
	for i, m := range a.Members() {
		name := fmt.Sprintf("%s(%s)", f.Name, m.Name)
		sr, err := a.Open(m)
		if err != nil {
			return &ferr.InFile{Name: name, Err: err}
		}
		nm := ar.NewMember{Name: m.Name, Date: m.Date, UID: m.UID, GID: m.GID, Mode: m.Mode, Data: sr, Symbols: bySym[i]}
		obj := byOffset[m.DataOffset]
		if obj != nil && obj.Name != name {
			obj = nil // an object of an archive nested in this member
		}
		if obj == nil {
			if in := nested[name]; in != nil {
				return fmt.Errorf("%s: an archive inside the archive, whose %s holds device code: goffload does not rewrite an archive's archives (extract it, rewrite it and put it back): %w",
					name, in.Name, goffload.ErrUnsupported)
			}
		}
		o, err := member(name, obj)
		if err != nil {
			return err
		}
		if o != nil {
			bw := bufio.NewWriterSize(io.NewOffsetWriter(scratch, end), 1<<20)
			n, err := o(bw)
			if err == nil {
				err = bw.Flush()
			}
			if err != nil {
				return &ferr.InFile{Name: name, Err: err}
			}
			nm.Data = io.NewSectionReader(scratch, end, n)
			end += n
		}
		members = append(members, nm)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := ar.WriteGNU(w, members); err != nil {
		return &ferr.InFile{Name: f.Name, Err: err}
	}
	return nil
}

// nestedOffload returns, by the name of a member of f, the first object of
// an archive nested in it that holds device code or offload entries: a
// rewrite of f would copy it as it is.
func nestedOffload(f *File) map[string]*Object {
	m := map[string]*Object{}
	for _, o := range f.Objects {
		if len(o.Images) == 0 && len(o.Entries) == 0 || !strings.HasPrefix(o.Name, f.Name+"(") {
			continue
		}
		// f.Name(member)(inner member)...: nested in f.Name(member).
		if i := strings.Index(o.Name[len(f.Name):], ")("); i >= 0 {
			outer := o.Name[:len(f.Name)+i+1]
			if m[outer] == nil {
				m[outer] = o
			}
		}
	}
	return m
}
