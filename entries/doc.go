// Package entries will write the offload entry tables (omp_offloading_entries,
// llvm_offload_entries and the CUDA/HIP tables) into ELF objects as each LLVM
// release does, and read them back from objects, executables and shared
// libraries. The entry layouts themselves are in package offload. Nothing is
// implemented yet; see the project's issue tracker.
package entries
