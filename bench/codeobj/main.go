// Command codeobj writes data shaped like a large GPU code object, for the
// benchmarks: instruction words drawn from a skewed vocabulary with random
// immediates, zero padding, symbol strings, a little noise, and copies of
// earlier stretches (template instantiations), reaching back megabytes.
// zstd -3 compresses it about 3.5 times, as it does real code objects. The
// output depends only on -mib and -seed.
//
//	go run ./bench/codeobj -mib 200 > img.o
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
)

func main() {
	mib := flag.Int("mib", 200, "size in MiB")
	seed := flag.Uint64("seed", 1, "seed of the generator")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if _, err := w.Write(generate(*mib<<20, *seed)); err != nil {
		fmt.Fprintln(os.Stderr, "codeobj:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "codeobj:", err)
		os.Exit(1)
	}
}

func generate(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x6f66666c6f6164))
	words := make([]uint64, 4096)
	for i := range words {
		words[i] = r.Uint64() &^ 0xffff_0000_0000 // opcode bits, small fields
	}
	zipf := rand.NewZipf(r, 1.3, 1, uint64(len(words)-1))
	names := []string{"_Z6kernelPfS_i", "__hip_cuid_", "vector_add", "reduce_sum", ".text", ".rodata",
		"amdhsa.kernels", ".kd", "__ockl_", "llvm.amdgcn.", "workgroup_id_x", "private_segment_size"}
	out := make([]byte, 0, n+64<<10)
	for len(out) < n {
		switch k := r.IntN(50); {
		case k < 33: // instructions
			for range 128 + r.IntN(512) {
				w := words[zipf.Uint64()]
				if r.IntN(6) == 0 {
					w = w&^0xffff_ffff | uint64(r.Uint32()) // an immediate
				}
				out = binary.LittleEndian.AppendUint64(out, w)
			}
		case k < 38: // padding
			out = append(out, make([]byte, r.IntN(2048))...)
		case k < 44: // symbol names
			for range 8 + r.IntN(64) {
				out = append(out, names[r.IntN(len(names))]...)
				out = fmt.Appendf(out, "%d", r.IntN(5000))
				out = append(out, 0)
			}
		case k < 49: // noise
			for range r.IntN(64) {
				out = binary.LittleEndian.AppendUint64(out, r.Uint64())
			}
		default: // a copy of an earlier stretch, with a few bytes changed
			if len(out) < 1<<20 {
				continue
			}
			size := 4<<10 + r.IntN(28<<10)
			from := r.IntN(len(out) - size)
			start := len(out)
			out = append(out, out[from:from+size]...)
			for range 4 {
				out[start+r.IntN(size)] ^= byte(1 + r.IntN(255))
			}
		}
	}
	return out[:n]
}
