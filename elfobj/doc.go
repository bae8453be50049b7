// Package elfobj will write, read and edit ELF relocatable objects in pure Go:
// sections, symbols and RELA relocations for x86-64, AArch64, ppc64 and riscv64.
// It is the ELF layer under the entries and wrap packages and knows nothing of
// offloading. Nothing is implemented yet; see the project's issue tracker.
package elfobj
