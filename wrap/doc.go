// Package wrap will make the registration objects that clang-linker-wrapper
// makes: device images in .llvm.offloading, the __tgt_device_image array and
// __tgt_bin_desc, and the constructor that calls __tgt_register_lib, for
// OpenMP, CUDA and HIP. Nothing is implemented yet; see the project's issue
// tracker.
package wrap
