package linkcache

import (
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// FuzzManifest reads manifests: a list of files or an error, never a panic,
// within tooltest.CheckAllocs's bound; what it reads, written again, is the
// same bytes.
func FuzzManifest(f *testing.F) {
	k := keyOf("fuzz")
	f.Add(formatManifest(k, []fileSum{{size: 3}, {size: 0}}))
	f.Add([]byte(manifestMagic + "\nkey " + k + "\n"))
	f.Add([]byte(manifestMagic + "\nkey " + k + "\nfile 0 01 " + k + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var files []fileSum
		var err error
		tooltest.CheckAllocs(t, len(data), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			files, err = parseManifest(data, k)
		})
		if err != nil {
			return
		}
		if got := formatManifest(k, files); string(got) != string(data) {
			t.Fatalf("read and written again:\n%q\nwas\n%q", got, data)
		}
	})
}
