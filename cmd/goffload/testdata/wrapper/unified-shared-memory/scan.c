#include "../offload.h"
#pragma omp requires unified_shared_memory
int prefix_sum(long *v, int n) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 1; i < n; i++) v[i] += v[i - 1];
  }
  return dev;
}
