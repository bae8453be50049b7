package main

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goffload/goffload/fatobj"
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

// jsonText is a string from a file in JSON output: fatobj.Text, which
// keeps the bytes that are not UTF-8.
type jsonText = fatobj.Text
