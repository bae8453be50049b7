package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// BinutilsPlugin returns the arguments that name, for GNU ar and nm, the
// LTO plugin of cc (gcc's, which its own links give ld): without them the
// tools load every plugin of bfd-plugins, where each LLVM release installed
// puts its LLVMgold, each loading its libLLVM (0.4 s of CPU a command with
// six releases) to read objects none of them is for. Where cc names no
// plugin file, none: the tools' default. Give it only where no archived
// object is LLVM bitcode (clang -flto), which only LLVMgold reads.
var BinutilsPlugin = sync.OnceValue(func() []string {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return nil
	}
	out, err := exec.Command(cc, "-print-file-name=liblto_plugin.so").Output()
	p := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(p) {
		return nil
	}
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	return []string{"--plugin", p}
})

// ArArgs returns the arguments of GNU ar ("ar") for args, [BinutilsPlugin]
// first: for archives of objects that are not LLVM bitcode.
func ArArgs(args ...string) []string {
	return append(slices.Clone(BinutilsPlugin()), args...)
}
