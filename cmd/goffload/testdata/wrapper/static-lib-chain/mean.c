#include "../offload.h"
#pragma omp begin declare target
int total(const int *v, int n);
#pragma omp end declare target
int mean(const int *v, int n) {
  int m = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: v[0:n]) map(from: m, dev)
  {
    ON_DEVICE(dev, probe);
    m = total(v, n) / n;
  }
  printf("mean: on device %d\n", dev);
  return m;
}
