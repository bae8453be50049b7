#include "../offload.h"
#pragma omp begin declare target
int square(int v);
#pragma omp end declare target
int run(int n) {
  int r = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: r, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 1; i <= n; i++) r += square(i);
  }
  printf("run: on device %d\n", dev);
  return r;
}
