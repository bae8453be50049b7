#include "../offload.h"
int cube_sum(int n, int *on_device) {
  int s = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: s, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 1; i <= n; i++) s += i * i * i;
  }
  *on_device = dev;
  return s;
}
