// Command streamobj writes an ELF relocatable object whose .llvm.offloading
// section is streamed from a file, and reports the time it took and the
// process's peak memory. bench/elfobj-stream.sh runs it against cp.
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
)

func main() {
	in := flag.String("in", "", "the file to embed")
	out := flag.String("o", "", "the object to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "streamobj:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	start := time.Now()
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	o := &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64}
	o.AddSection(&elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING,
		Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Reader: f, Size: st.Size()}, false)
	o.AddSection(&elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS}, false)
	err = atomicfile.Write(out, func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
	if err != nil {
		return err
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	fmt.Printf("bytes %d seconds %.3f peak_rss_kib %d\n", st.Size(), time.Since(start).Seconds(), ru.Maxrss)
	return nil
}
