// Package link is the link flow of clang-linker-wrapper, releases 15 to 24,
// as a library: [ParseWrapperArgs] reads the arguments clang passes to the
// wrapper; [Plan] reads the inputs, finds their device code as the
// release's wrapper does (every object, and the members of static libraries,
// named or found through -l and -L, by the release's rule on device
// symbols: docs/releases.md#archive-members),
// chooses the release and returns the steps as data (extract, device link
// per target, bundle or fatbinary, wrap, host link); [Link.Run] runs them,
// each once the steps that write the files it reads are done, several at a
// time. The device links run the release's clang (ld
// for LLVM 15) with the command line that release's wrapper uses; the
// bundling and the registration object are goffload's. Where the wrapper of
// LLVM 17 to 21 runs the LTO of HIP's AMDGPU bitcode in its own process,
// the link runs it as two commands before the device link (StepDeviceLTO:
// lld's LTO writing the optimised module; StepCodegen: the release's llc),
// whose one object the device link takes, as LLVM's does; the code object
// is the wrapper's, byte for byte. Where the wrapper of LLVM 15 to 19 links
// a target's bitcode (-foffload-lto objects, --bitcode-library files, a JIT
// link's bitcode) in its own process, the link runs the release's
// llvm-lto2 with the symbol resolutions that wrapper gives its LTO, and
// gets the same object, or (--embed-bitcode) registers the same bitcode.
//
// Planning is separate from reading: [Open] reads what a plan reads (the
// inputs, the libraries -l finds, the release's tools) into [Inputs], and
// [PlanInputs] plans from them alone, reading nothing else, in time linear
// in the inputs; a caller holding its files in memory gives them with
// [Inputs.AddFile] and its tools with [Inputs.AddTool]. [Plan] is both at
// once.
//
// With [Options.Cache] the device links are taken from a cache when nothing
// they read changed ([Link.StepKey]; docs/cache.md): [linkcache] is the
// local one, and a build system may give its own.
//
// goffload's command line uses it for `goffload link` and for
// `goffload linker-wrapper`, which is also what runs when goffload is
// installed as DIR/clang-linker-wrapper for clang -B DIR.
package link
