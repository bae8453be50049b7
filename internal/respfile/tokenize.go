package respfile

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/goffload/goffload"
)

// Tokenize splits the text of a response file into arguments as
// llvm::cl::TokenizeGNUCommandLine does:
//
//   - space, tab, CR and LF separate arguments (not vertical tab or form
//     feed), and no argument is ever empty: "" and ” make nothing of
//     their own, only a part of the argument they touch (a"b c"d is "ab cd");
//   - outside quotes, a backslash takes the next byte as it is, a quote or a
//     newline too (a\<newline>b is one argument holding a newline), and a
//     backslash at the very end is itself;
//   - inside single or double quotes, alike, a backslash takes the next byte
//     (so '\” is a quote), and a quote left open runs to the end;
//   - an argument ends at its first NUL byte, as LLVM passes arguments as C
//     strings: "a\x00b" is "a", and one that starts with NUL is empty.
func Tokenize(text string) []string {
	var args []string
	var tok []byte
	end := func() {
		args = append(args, cString(tok))
		tok = tok[:0]
	}
	for i := 0; i < len(text); i++ {
		if len(tok) == 0 {
			for i < len(text) && isSpace(text[i]) {
				i++
			}
			if i == len(text) {
				break
			}
		}
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text):
			i++
			tok = append(tok, text[i])
		case c == '"' || c == '\'':
			for i++; i < len(text) && text[i] != c; i++ {
				if text[i] == '\\' && i+1 < len(text) {
					i++
				}
				tok = append(tok, text[i])
			}
		case isSpace(c):
			if len(tok) > 0 {
				end()
			}
		default:
			tok = append(tok, c)
		}
	}
	if len(tok) > 0 {
		end()
	}
	return args
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// cString is tok up to its first NUL byte.
func cString(tok []byte) string {
	for i, c := range tok {
		if c == 0 {
			return string(tok[:i])
		}
	}
	return string(tok)
}

// decode returns the text of a response file as LLVM reads it: a file that
// starts with a UTF-16 byte order mark (FF FE little-endian, FE FF
// big-endian) is converted to UTF-8, strictly (an odd length or a lone
// surrogate is an error), without its mark; a UTF-8 byte order mark is
// dropped; any other bytes are taken as they are.
func decode(data []byte) (string, error) {
	switch {
	case len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF):
		return fromUTF16(data)
	case len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF:
		return string(data[3:]), nil
	}
	return string(data), nil
}

// fromUTF16 converts data, which starts with its byte order mark, as
// llvm::convertUTF16ToUTF8String does.
func fromUTF16(data []byte) (string, error) {
	if len(data)%2 != 0 {
		return "", fmt.Errorf("starts with a UTF-16 byte order mark but is not UTF-16: an odd length, %d bytes: %w", len(data), goffload.ErrInvalid)
	}
	big := data[0] == 0xFE
	unit := func(i int) rune {
		if big {
			return rune(data[i])<<8 | rune(data[i+1])
		}
		return rune(data[i+1])<<8 | rune(data[i])
	}
	var b strings.Builder
	b.Grow(len(data) / 2 * 3)
	var buf [utf8.UTFMax]byte
	for i := 2; i < len(data); i += 2 {
		r := unit(i)
		switch {
		case r >= 0xD800 && r < 0xDC00 && i+2 < len(data) && unit(i+2) >= 0xDC00 && unit(i+2) < 0xE000:
			r = 0x10000 + (r-0xD800)<<10 + unit(i+2) - 0xDC00
			i += 2
		case r >= 0xD800 && r < 0xE000:
			return "", fmt.Errorf("starts with a UTF-16 byte order mark but is not UTF-16: a lone surrogate %#x at byte %#x: %w", r, i, goffload.ErrInvalid)
		}
		b.Write(buf[:utf8.EncodeRune(buf[:], r)])
	}
	return b.String(), nil
}
