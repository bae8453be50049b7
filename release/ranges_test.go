package release

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsStateTheTable checks what the docs, package comments, usage
// texts and the README say of the releases as a whole (which the module
// speaks, which is main, which have a clang-linker-wrapper, which write
// OffloadBinary version 1, which were measured) against the table, so that
// a row added, or a release measured, makes each stale statement fail here.
// Each statement is a pattern in a file, its numbers captured; every match
// in the file is checked, and each pattern must match at least once (a
// statement reworded out of the pattern's reach fails too). The text is
// read with comment markers and line breaks taken out.
func TestDocsStateTheTable(t *testing.T) {
	rows := All()
	first, last := rows[0].Major, rows[len(rows)-1].Major
	var wrapper, v1, measured, inferredBelow []int
	for _, r := range rows {
		if r.Wrapper.Form == WrapperLinkerWrapper {
			wrapper = append(wrapper, r.Major)
		}
		if r.BinaryVersion == 1 {
			v1 = append(v1, r.Major)
		}
		if !r.Inferred {
			measured = append(measured, r.Major)
		}
	}
	lastMeasured := measured[len(measured)-1]
	for _, r := range rows {
		if r.Inferred && r.Major < lastMeasured {
			inferredBelow = append(inferredBelow, r.Major)
		}
	}
	var v2 []int
	for _, r := range rows {
		if r.BinaryVersion == 2 {
			v2 = append(v2, r.Major)
		}
	}
	span := func(s []int) string { return fmt.Sprintf("%d %d", s[0], s[len(s)-1]) }
	all := fmt.Sprintf("%d %d", first, last)
	main := strconv.Itoa(last)
	for _, c := range []struct {
		file, pattern string
		want          string // the captured numbers, joined by spaces
	}{
		{"release/doc.go", `speaks LLVM (\d+) to (\d+), (\d+) being LLVM's main branch`, all + " " + main},
		{"offload/doc.go", `speaks LLVM (\d+) to (\d+), (\d+) being LLVM's main branch`, all + " " + main},
		{"offloadbinary/doc.go", `Row (\d+) of the table is LLVM's main branch`, main},
		{"release/doc.go", `the real tools of LLVM (\d+) to (\d+) except (\d+)`, fmt.Sprintf("%d %d %s", measured[0], lastMeasured, strings.Trim(fmt.Sprint(inferredBelow), "[]"))},
		{"offloadbinary/doc.go", `the only version any release (\d+)[–-](\d+) writes`, span(v1)},
		{"link/doc.go", `clang-linker-wrapper, releases (\d+) to (\d+)`, span(wrapper)},
		{"link/args.go", `options of clang-linker-wrapper (\d+) to (\d+)`, span(wrapper)},
		{"link/args.go", `as releases (\d+) to (\d+) pass them`, span(wrapper)},
		{"cmd/goffload/link.go", `the arguments clang (\d+) to (\d+) pass it`, span(wrapper)},
		{"cmd/goffload/convert.go", `\((\d+)-(\d+), (\d+) being main`, all + " " + main},
		{"README.md", `every LLVM release from (\d+) to (\d+) exactly`, fmt.Sprintf("%d %d", first, DefaultMajor)},
		{"README.md", `main branch as release (\d+)`, main},
		{"README.md", "`clang-linker-wrapper` (\\d+)[–-](\\d+) as a library", span(wrapper)},
		{"docs/offload-binary.md", `releases (\d+) to (\d+) write version 1, LLVM (\d+) version 2`, span(v1) + " " + strings.Trim(fmt.Sprint(v2), "[]")},
		{"docs/offload-binary.md", `called release (\d+) here, writes version 3`, main},
		{"docs/commands.md", `LLVM releases: LLVM (\d+)-(\d+) \(default (\d+)`, fmt.Sprintf("%s %d", all, DefaultMajor)},
		{"docs/commands.md", `main checked against its sources on (\d+)-(\d+)-(\d+)\)`, strings.ReplaceAll(MainCheckedOn, "-", " ")},
		{"docs/releases.md", `last checked against main on (\d+)-(\d+)-(\d+)`, strings.ReplaceAll(MainCheckedOn, "-", " ")},
	} {
		data, err := os.ReadFile(filepath.Join("..", c.file))
		if err != nil {
			t.Fatal(err)
		}
		text := flatten(string(data))
		ms := regexp.MustCompile(c.pattern).FindAllStringSubmatch(text, -1)
		if len(ms) == 0 {
			t.Errorf("%s: nothing matches %q: reworded? Say it from the table (%s)", c.file, c.pattern, c.want)
		}
		for _, m := range ms {
			if got := strings.Join(m[1:], " "); got != c.want {
				t.Errorf("%s says %q: the table says %s", c.file, m[0], c.want)
			}
		}
	}
}

// flatten takes the comment markers (//) from the start of lines, and the
// line breaks and runs of spaces out of text.
func flatten(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimSpace(strings.TrimPrefix(line, "//"))
		b.WriteString(line)
		b.WriteByte(' ')
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
