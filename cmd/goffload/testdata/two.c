/* Compiled for two offload targets (x86-64 host device and amdgcn without
   the GPU libraries) to test stripping one of them. */
#include <stdio.h>
int scale = 3;
#pragma omp declare target enter(scale)
int kernel_sum(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = n * scale; }
  return r;
}
#ifndef NO_MAIN
int main(void) { printf("kernel_sum(5)=%d\n", kernel_sum(5)); return 0; }
#endif
