package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goffload/goffload/offload"
)

// The strings of an input (triples, arches, archive member and section
// names, symbols, bundle IDs) are printed through shown, messages through
// escaped: a name from a file must not forge lines of the output (a BSD
// archive member name may hold newlines) nor reach a terminal as control
// sequences (ESC, CR). What prints as itself is printed as it is, so the
// output of ordinary files is unchanged (and llvm-objdump's, where list
// prints what it prints).

// printable reports whether s prints as itself: valid UTF-8 of runes that
// strconv.IsPrint accepts (no control character, no format character such
// as U+202E, no space but ' ').
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) {
			// RuneError is also what an invalid byte decodes to.
			return false
		}
	}
	return true
}

// shown returns a string from a file as text output prints it: as it is
// when it is printable, else quoted as %q quotes it ("a\nb", "\x1b[31m").
func shown(s string) string {
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// escaped returns a message with each byte or rune that does not print
// written as Go writes it in a quoted string (\r, \x1b, \u202e, \xff for a
// byte that is not UTF-8), the rest as it is.
func escaped(s string) string {
	if printable(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case strconv.IsPrint(r) && r != utf8.RuneError:
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// quoteName is shown for a name in a list of key=value fields: quoted
// also when it is empty or holds a space, a tab or a quote.
func quoteName(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"") {
		return strconv.Quote(s)
	}
	return shown(s)
}

// jsonText is a string from a file in JSON output. JSON strings are
// Unicode; a byte that is not UTF-8 is written as the lone surrogate
// \udc80 to \udcff (U+DC00 plus the byte), as Python's "surrogateescape"
// decodes it, so that no two strings that differ are written alike (
// encoding/json would write U+FFFD for each). A valid string is written
// as encoding/json writes it.
type jsonText string

func (s jsonText) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	b := []byte{'"'}
	for rest := string(s); rest != ""; {
		i := 0
		for i < len(rest) {
			r, n := utf8.DecodeRuneInString(rest[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		if i > 0 {
			q, err := json.Marshal(rest[:i])
			if err != nil {
				return nil, err
			}
			b = append(b, q[1:len(q)-1]...)
		}
		if i < len(rest) {
			b = fmt.Appendf(b, `\udc%02x`, rest[i])
			i++
		}
		rest = rest[i:]
	}
	return append(b, '"'), nil
}

// jsonStrings is an image's string table in JSON: an object of its keys
// in byte order (the last value of a key given twice), keys and values
// written as jsonText.
type jsonStrings []offload.KeyValue

func (kvs jsonStrings) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	keys := slices.Sorted(maps.Keys(m))
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kj, err := jsonText(k).MarshalJSON()
		if err != nil {
			return nil, err
		}
		vj, err := jsonText(m[k]).MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kj...), ':'), vj...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes, for the tests and for
// programs of the module that read list's output (lone surrogates are
// read as U+FFFD, as encoding/json reads them).
func (kvs *jsonStrings) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*kvs = (*kvs)[:0]
	for _, k := range slices.Sorted(maps.Keys(m)) {
		*kvs = append(*kvs, offload.KeyValue{Key: k, Value: m[k]})
	}
	return nil
}
