package release

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsNameEveryField: docs/releases.md#table-fields names every field
// of Release (a group's fields as Group.Field) and no field that is gone.
func TestDocsNameEveryField(t *testing.T) {
	data, err := os.ReadFile("../docs/releases.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, `<a id="table-fields"></a>`)
	end := strings.Index(text, `<a id="device-link"></a>`)
	if start < 0 || end < start {
		t.Fatal("docs/releases.md has no table-fields section before device-link")
	}
	named := map[string]bool{}
	for _, line := range strings.Split(text[start:end], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range regexp.MustCompile("`([A-Za-z0-9.]+)`").FindAllStringSubmatch(first, -1) {
			named[m[1]] = true
		}
	}
	var fields []string
	rt := reflect.TypeFor[Release]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if f.Type.Kind() == reflect.Struct {
			for j := range f.Type.NumField() {
				fields = append(fields, f.Name+"."+f.Type.Field(j).Name)
			}
			continue
		}
		fields = append(fields, f.Name)
	}
	for _, f := range fields {
		if !named[f] {
			t.Errorf("docs/releases.md#table-fields does not name %s", f)
		}
	}
	for n := range named {
		if !slices.Contains(fields, n) {
			t.Errorf("docs/releases.md#table-fields names %s, which Release does not have", n)
		}
	}
}
