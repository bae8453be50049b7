// Device code for TestSYCLMatchesLinkerWrapper: compiled for
// spirv64-unknown-unknown with clang -cc1 -emit-llvm-bc, packaged as a SYCL
// OffloadBinary and linked by clang-linker-wrapper's device link
// (clang --sycl-link, clang-sycl-linker), which lists the kernels in the
// binary's "symbols" string.
kernel void vadd(global const float *a, global const float *b, global float *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}

kernel void fill(global int *p, int v) { p[get_global_id(0)] = v; }

kernel void scale_by_a_factor_with_a_long_name(global float *p, float f) { p[get_global_id(0)] *= f; }
