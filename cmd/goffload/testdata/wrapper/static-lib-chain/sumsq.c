#include "../offload.h"
#pragma omp begin declare target
int square(int x);
#pragma omp end declare target
int sumsq(const int *v, int n) {
  int s = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: v[0:n]) map(tofrom: s, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) s += square(v[i]);
  }
  printf("sumsq: on device %d\n", dev);
  return s;
}
