package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/internal/tooltest"
)

// TestPlanIsLinearInInputs plans links of many device images, as a process
// (link --dry-run, --plan=json), within the budget of the inputs' size
// (checkRunBudget: 1 s + 1 µs a byte of CPU): 20,000 archive members all
// named m.o, whose extracted images the plan numbers m…-.o, m…-.1.o, …
// (the numbering probed every taken name again for each image: 58 s of
// CPU for 14 MB); 10,000 objects embedded in one bitcode file (each image's
// file was looked for in a list of every other: 42 s for 20,000 in 1 MB);
// and an archive of 20,000 members of distinct names planned as JSON. Each
// plan takes every image.
func TestPlanIsLinearInInputs(t *testing.T) {
	t.Parallel()
	// 20,000 members; 10,000 objects in the bitcode, whose constants LLVM
	// makes one (50 bytes of input an object): the plan holds about 1 KB
	// an image, and 20,000 would come within a few MiB of the memory
	// budget of the file's 1 MB.
	const n, nBitcode = 20000, 10000
	exe := goffloadExe(t)
	dir := t.TempDir()
	work := t.TempDir()
	img := writeInput(t, dir, "img", []byte("device code"))
	bin := filepath.Join(dir, "m.bin")
	obj := filepath.Join(dir, "m.o")
	if _, stderr, code := cli(t, "package", "-o", bin, "--image", "file="+img+",triple=x86_64-unknown-linux-gnu,arch=,kind=openmp"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := cli(t, "embed", "-o", obj, bin); code != 0 {
		t.Fatal(stderr)
	}
	objData, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	archive := func(name string, memberName func(i int) string) string {
		t.Helper()
		members := make([]ar.NewMember, n)
		for i := range members {
			members[i] = ar.NewMember{Name: memberName(i), Data: io.NewSectionReader(bytes.NewReader(objData), 0, int64(len(objData)))}
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := ar.WriteGNU(f, members); err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	same := archive("same.a", func(int) string { return "m.o" })
	distinct := archive("distinct.a", func(i int) string { return fmt.Sprintf("m%d.o", i) })

	// The bitcode: n globals in .llvm.offloading, each the binary, listed
	// in !llvm.embedded.objects, assembled by llvm-as.
	binData, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var ll strings.Builder
	ll.WriteString("target triple = \"x86_64-unknown-linux-gnu\"\n")
	var lit strings.Builder
	for _, c := range binData {
		fmt.Fprintf(&lit, "\\%02X", c)
	}
	for i := range nBitcode {
		fmt.Fprintf(&ll, "@o%d = private constant [%d x i8] c\"%s\", section \".llvm.offloading\", align 8, !exclude !0\n", i, len(binData), lit.String())
	}
	ll.WriteString("define i32 @main() {\n  ret i32 0\n}\n!0 = !{}\n!llvm.embedded.objects = !{")
	for i := range nBitcode {
		if i > 0 {
			ll.WriteString(", ")
		}
		fmt.Fprintf(&ll, "!%d", i+1)
	}
	ll.WriteString("}\n")
	for i := range nBitcode {
		fmt.Fprintf(&ll, "!%d = !{ptr @o%d, !\".llvm.offloading\"}\n", i+1, i)
	}
	llPath := writeInput(t, dir, "many.ll", []byte(ll.String()))
	bc := filepath.Join(dir, "many.bc")
	if out, err := exec.Command(tooltest.Tool(t, "llvm-as", 22), llPath, "-o", bc).CombinedOutput(); err != nil {
		t.Fatalf("llvm-as: %v\n%s", err, out)
	}

	images := regexp.MustCompile(`/(m|many)-x86_64-unknown-linux-gnu-(\.[0-9]+)?\.o\b`)
	for _, c := range []struct {
		name   string
		inputs []string
		images int
		json   bool
	}{
		{"members-of-one-name", []string{obj, same}, n + 1, false},
		{"bitcode-embedding-many", []string{bc}, nBitcode, false},
		{"members-as-json", []string{obj, distinct}, n + 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"link", "--llvm", "22", "--dry-run", "-o", filepath.Join(work, "prog")}
			if c.json {
				args[3] = "--plan=json"
			}
			args = append(args, c.inputs...)
			res := runGoffload(t, exe, work, args...)
			var size int64
			for _, in := range c.inputs {
				size += inputSize(in)
			}
			checkRunBudget(t, res, c.inputs[len(c.inputs)-1], size, 0)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			var took int
			if c.json {
				var plan struct {
					Steps []struct {
						Kind    string
						Outputs []string
					}
				}
				if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
					t.Fatal(err)
				}
				for _, s := range plan.Steps {
					if s.Kind == "extract" {
						took += len(s.Outputs)
					}
				}
			} else {
				names := map[string]bool{}
				for _, m := range images.FindAllString(res.stdout, -1) {
					names[m] = true
				}
				took = len(names)
			}
			if took != c.images {
				t.Errorf("the plan takes %d images, want %d", took, c.images)
			}
			t.Logf("%d bytes: %v of CPU, %d MiB", size, res.cpu, res.rss>>20)
		})
	}
}
