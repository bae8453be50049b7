#include "../offload.h"
#pragma omp requires unified_address
int fill(int *d, int n) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target is_device_ptr(d) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) d[i] = i * i;
  }
  return dev;
}
