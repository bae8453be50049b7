#include "../offload.h"
#pragma omp begin declare target
int offset = 10;
int shift(int x) { return x + offset; }
#pragma omp end declare target
int left(int x, int *on_device) {
  int r = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: r, dev)
  {
    ON_DEVICE(dev, probe);
    r = shift(x) * 2;
  }
  *on_device = dev;
  return r;
}
