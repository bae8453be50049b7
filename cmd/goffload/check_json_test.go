package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/fatobj"
)

// check --json writes the strings of the entries package's findings,
// facts and registrations (symbol and section names, the other input's
// name) as list --json writes strings: bytes that are not UTF-8 kept as
// lone surrogates, not each made U+FFFD, so that \xff and \xfe differ.
func TestCheckJSONKeepsBytes(t *testing.T) {
	c := &checkedInput{name: "k\xff.o", report: &fatobj.Report{
		Object: &fatobj.Object{},
		Origin: &entries.Origin{
			Facts:         []entries.Fact{{Topic: entries.TopicSymbols, What: "sym\xfe"}},
			Registrations: []entries.Registration{{Section: "sec\xfd", Entries: 2}},
		},
		Findings: []entries.Finding{{Kind: "missing-symbol", Message: "entry \"f\xff\" has no symbol", Section: "s\xfe", Entries: 1, Other: "lib.a(o\xfc.o)"}},
	}}
	var b bytes.Buffer
	if err := c.printJSON(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`"file": "k\udcff.o"`, `"what": "sym\udcfe"`, `"section": "sec\udcfd"`, `"entries": 2`,
		`"message": "entry \"f\udcff\" has no symbol"`, `"section": "s\udcfe"`, `"other": "lib.a(o\udcfc.o)"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	if strings.Contains(out, "\ufffd") || strings.Contains(out, `\ufffd`) {
		t.Errorf("U+FFFD in\n%s", out)
	}
}
