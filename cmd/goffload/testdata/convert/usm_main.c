/* The program of usm_lib.c's library: with unified shared memory (which
   `requires` asks for), what the device writes to memory mapped `to` is
   what the host reads back; without it the host keeps its own value. */
#include <stdio.h>
#pragma omp requires unified_shared_memory

int libwork(int *p, int n);
int bias = 40;
#pragma omp declare target to(bias)

int main(void) {
  int u = 1, v = 1, a = 0;
#pragma omp target map(to: u) map(tofrom: a)
  {
    u = 2;
    a = bias + 2;
  }
  int b = libwork(&v, 10);
  printf("u=%d v=%d a=%d b=%d\n", u, v, a, b);
  return 0;
}
