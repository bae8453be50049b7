#include "../offload.h"
#pragma omp begin declare target
int weight = 7;
#pragma omp end declare target
int used(int n) {
  int r = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: r, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 1; i <= n; i++) r += weight * i;
  }
  printf("used: on device %d\n", dev);
  return r;
}
