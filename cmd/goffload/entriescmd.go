package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

// specEntry is one entry of an entries spec file.
type specEntry struct {
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	Symbol string          `json:"symbol"`
	Addend int64           `json:"addend"`
	Size   uint64          `json:"size"`
	Flags  json.RawMessage `json:"flags"`
	Data   uint64          `json:"data"`
	Aux    string          `json:"aux"`
}

func runEntries(args []string, stdout io.Writer) error {
	var llvm, spec, triple, out string
	fs := newFlags("entries", &llvm)
	fs.StringVar(&spec, "spec", "", "the entries as a JSON list of {kind, name, symbol, size, flags, data, aux}")
	fs.StringVar(&triple, "triple", wrap.DefaultTriple, "the host `triple`")
	fs.StringVar(&out, "o", "", "write the object to `OUT`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if spec == "" || out == "" {
		return fmt.Errorf("--spec SPEC.json and -o OUT are required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	rel, err := parseRelease(llvm)
	if err != nil {
		return err
	}
	ents, err := readSpec(spec, rel)
	if err != nil {
		return err
	}
	o, err := elfobj.ForTriple(triple)
	if err != nil {
		return err
	}
	if err := entries.Write(o, rel, ents); err != nil {
		return err
	}
	o.AddSection(&elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1}, false)
	return writeObject(dest, o)
}

// maxSpecSize bounds an entries spec: a million entries take less.
const maxSpecSize = 256 << 20

func readSpec(path string, rel *release.Release) ([]offload.Entry, error) {
	data, err := infile.ReadFile(path, maxSpecSize)
	if err != nil {
		return nil, err
	}
	var specs []specEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&specs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ents := make([]offload.Entry, len(specs))
	for i, s := range specs {
		e, err := s.entry(rel)
		if err != nil {
			return nil, fmt.Errorf("%s: entry %d: %w", path, i, err)
		}
		ents[i] = e
	}
	return ents, nil
}

func (s specEntry) entry(rel *release.Release) (offload.Entry, error) {
	kind, err := offload.ParseOffloadKind(s.Kind)
	if err != nil {
		return offload.Entry{}, err
	}
	flags, err := parseEntryFlags(kind, s.Flags)
	if err != nil {
		return offload.Entry{}, err
	}
	return offload.Entry{Kind: kind, Flags: flags, Name: s.Name, Size: s.Size, Data: s.Data,
		Address: offload.SymbolRef{Symbol: s.Symbol, Addend: s.Addend}, Aux: offload.SymbolRef{Symbol: s.Aux}}, nil
}

// parseEntryFlags reads flags given as a number or as names ("link+indirect",
// "managed+extern").
func parseEntryFlags(kind offload.OffloadKind, raw json.RawMessage) (uint32, error) {
	if len(raw) == 0 {
		return 0, nil
	}
	var n uint32
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("flags %s: a number or a string of names", raw)
	}
	if v, err := strconv.ParseUint(s, 0, 32); err == nil {
		return uint32(v), nil
	}
	switch kind {
	case offload.OffloadOpenMP:
		f, err := offload.ParseOpenMPFlags(s)
		return uint32(f), err
	case offload.OffloadCUDA, offload.OffloadHIP:
		f, err := offload.ParseGPUFlags(s)
		return uint32(f), err
	}
	return 0, fmt.Errorf("flags %q for kind %v", s, kind)
}
