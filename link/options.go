package link

import (
	"io"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// Options is one offload link: what clang passes to clang-linker-wrapper
// ([ParseWrapperArgs] reads it), or what a Go program or `goffload link`
// asks for.
type Options struct {
	// Release is the LLVM release whose wrapper the link acts as; nil
	// takes it from the linker arguments (clang's -L/usr/lib/llvm-N/lib)
	// or, failing that, from the inputs' formats.
	Release *release.Release
	// HostTriple is the host's triple (--host-triple); "" is
	// x86_64-unknown-linux-gnu.
	HostTriple string
	// Linker is the host linker: ld (--linker-path), whose argv
	// LinkerArgs is, or, with Driver, a compiler driver such as cc.
	Linker     string
	LinkerArgs []string
	// Driver makes LinkerArgs a compiler driver's link arguments (-Wl,...,
	// -L, -l, inputs), and has the link add the OpenMP runtime
	// (-lomp -lomptarget from RuntimeDir) when it wraps OpenMP images.
	Driver bool
	// Language is the language whose driver a Driver link links as: "c"
	// (clang), "c++" (clang++: the C++ library and libm, on the host and
	// a CPU target's device), or "" to tell from the inputs (see
	// [IsCPlusPlus]) and from a -lstdc++ or -lc++ among LinkerArgs.
	Language string
	// RuntimeDir is the folder of libomp and libomptarget for a Driver
	// link; "" is /usr/lib/llvm-N/lib.
	RuntimeDir string
	// DeviceClang is the clang that links device code; "" is the
	// release's: /usr/lib/llvm-N/bin/clang, or clang-N on $PATH.
	DeviceClang string
	// LLC is the llc that generates the code of an AMDGPU target's device
	// LTO for LLVM 17 to 21 (whose wrapper runs the LTO itself); "" is the
	// one beside DeviceClang, else the release's: /usr/lib/llvm-N/bin/llc,
	// or llc-N on $PATH.
	LLC string
	// OptLevel is the device link's optimisation (--opt-level, default O2;
	// for LLVM 17 to 21 also that of the device LTO and its code
	// generation; LLVM 22 takes it from DeviceCompilerArgs instead).
	OptLevel string
	// DeviceDebug adds -g to the device link (--device-debug).
	DeviceDebug bool
	// DeviceLinkerArgs and DeviceCompilerArgs go to the device links of
	// their triple (--device-linker, --device-compiler).
	DeviceLinkerArgs   []TargetArg
	DeviceCompilerArgs []TargetArg
	// TimeTrace, if not "", names the file that Run writes a trace of its
	// steps to (--wrapper-time-trace=FILE), in the Chrome trace event format
	// that LLVM's time traces use: the whole link, then each step that took
	// TimeTraceGranularity microseconds or more (0: every step;
	// --wrapper-time-trace-granularity, which is DefaultTimeTraceGranularity
	// unless given). A dry run writes none.
	TimeTrace            string
	TimeTraceGranularity int
	// LLVMOptions are options of LLVM's own for the device code's
	// optimisation and code generation, in order: --offload-opt=OPT and
	// -mllvm OPT. 16 to 21's wrapper takes them in its own process, for the
	// LTO it runs there (which goffload runs as its own steps for HIP's
	// AMDGPU bitcode in 17 to 21: each given to lld as -mllvm=OPT and to
	// llc as OPT); 17 to 21's gives the device link each -mllvm one as
	// -mllvm OPT too, and 22's gives it each as -Xlinker --plugin-opt=OPT
	// and each -mllvm one again as -Xlinker -mllvm=OPT.
	LLVMOptions []LLVMOption
	// EmbedBitcode registers the device code as LLVM IR, for the runtime to
	// compile when the program runs (--embed-bitcode, which clang passes
	// for -fopenmp-target-jit): the device link stops after its LTO
	// (-Wl,--lto-emit-llvm, the device linker's option, as LLVM 22's
	// wrapper asks for it) and the image is of kind LLVM IR. LLVM 15 to
	// 21's wrapper runs that LTO in its own process and keeps the module
	// after its optimisation; goffload runs it as the release's llvm-lto2
	// (found as LLC is), given each symbol's resolution as that wrapper
	// resolves it, and registers the same bitcode, byte for byte (measured
	// with 15, 16 and 19; 17, 18, 20 and 21 taken from their sources). A
	// CPU target whose device linker is GNU ld fails with 22's wrapper as
	// it does with LLVM's (ld has no --lto-emit-llvm).
	EmbedBitcode bool
	// PrintWrappedModule writes to Stderr, after each registration object
	// is written, what it holds (--print-wrapped-module): its sections,
	// defined symbols and device images as goffload reads them back. LLVM's
	// wrapper prints the LLVM IR module it compiles into that object;
	// goffload writes the object itself and has no module to print. A dry
	// run writes no registration object and prints nothing.
	PrintWrappedModule bool
	// ShouldExtract names architectures whose archive members are always
	// taken (--should-extract).
	ShouldExtract []string
	// OverrideImages, if any, are the linked device images of the program
	// (--override-image=KIND=FILE, LLVM 19 and later): the device code of
	// the inputs is not used, and no device link runs; each file, an ELF
	// file as a device link makes it, is registered as an image of its
	// kind for the target its header names ([elfobj.Header.Target]: x86_64--
	// for an x86-64 file, amdgcn-amd-amdhsa and its processor for an AMDGPU
	// code object), as LLVM's wrapper names it.
	OverrideImages []OverrideImage
	// BitcodeLibraries are the values of --bitcode-library=KIND-TRIPLE-ARCH=FILE
	// that [ParseWrapperArgs] read, each also left in LinkerArgs where it
	// was. LLVM 15 to 19's wrapper adds each file's bitcode to the device
	// code of the target whose triple and arch they name (one of its own
	// where none matches), links it in the LTO it runs in its own process,
	// which goffload runs as llvm-lto2, and passes the option to no host
	// link. LLVM 20 and later have no such option (#114298) and pass it to
	// the host linker, as goffload does (-Xoffload-linker FILE gives a
	// device link a file).
	BitcodeLibraries []string
	// SaveTemps keeps the temporary files, in the current folder, under
	// the names the release's wrapper gives them.
	SaveTemps bool
	// Verbose prints each command before it runs (--wrapper-verbose), and
	// asks the device tools for theirs (16 to 21: -v).
	Verbose bool
	// Print prints each command before it runs, and nothing more.
	Print bool
	// DryRun prints the commands and runs none (--dry-run).
	DryRun bool
	// Relocatable merges the inputs and the registration object into one
	// object for a later link (-r; LLVM 19+).
	Relocatable bool
	// EmitFatbinOnly stops after the fat binary (--emit-fatbin-only).
	EmitFatbinOnly bool
	// Compress compresses the HIP fatbin (--compress), as the release's
	// clang-offload-bundler -compress does (LLVM 18 and later), at
	// CompressionLevel if not nil (--compression-level=N: the bundler's
	// -compression-level), else at the bundler's default.
	Compress         bool
	CompressionLevel *int
	// NoHostLink stops after the registration object (Link.Wrapper).
	NoHostLink bool
	// Jobs bounds the steps run at once (--wrapper-jobs): the device
	// images written, the device links of several targets; 0 is one per
	// CPU, 1 runs the steps in the plan's order.
	Jobs int
	// CUDAPath and ROCmPath are the GPU toolkits (--cuda-path, --rocm-path).
	CUDAPath, ROCmPath string
	// TempDir is the folder of the intermediate files (not with
	// SaveTemps, which writes them in the current folder); "" is a new
	// folder in os.TempDir that Plan names, Run makes and [Link.Close]
	// removes. A relative TempDir keeps the plan's paths relative: a build
	// system can run its steps anywhere.
	TempDir string
	// Goffload is the goffload program that the plan's own steps name
	// ([Step.Goffload]): "" is "goffload" (on $PATH when a build system runs
	// them). Link.Run runs them within the calling program.
	Goffload string
	// Cache, if not nil, keeps the outputs of the device links (and of the
	// device LTO and code generation of LLVM 17 to 21): a step whose key
	// ([Link.StepKey]) the cache holds is not run, its outputs are copied
	// from the cache; the others run and are stored. Not with SaveTemps.
	// [*linkcache.Cache] is the local cache; Verbose and Print report hits
	// and misses, DryRun what it would hit where it can tell.
	Cache Cache
	// Stdout receives the printed commands (Verbose, DryRun); Stderr the
	// commands' own output. nil discards, but for the last 4 KiB that a
	// tool which fails printed: the step's error holds them.
	Stdout, Stderr io.Writer
}

// OverrideImage is a linked device image given to the link in place of the
// device code of its inputs (--override-image=KIND=FILE).
type OverrideImage struct {
	Kind offload.OffloadKind `json:"kind"`
	File string              `json:"file"`
}
