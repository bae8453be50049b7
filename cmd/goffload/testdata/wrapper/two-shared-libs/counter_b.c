#include "../offload.h"
#pragma omp begin declare target
static int hits = 1000;
#pragma omp end declare target
int a_hit(int by);
int b_hit(int by, int *on_device) {
  int h = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: h, dev)
  {
    ON_DEVICE(dev, probe);
    hits += by;
    h = hits;
  }
  *on_device = dev;
  return h + a_hit(1);
}
