#include "../offload.h"
#include "plugins.h"
PLUGIN(red)
static int run_red(int *on_device) {
  int v = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: v, dev)
  {
    ON_DEVICE(dev, probe);
    v = 0xff0000 >> 16;
  }
  *on_device = dev;
  return v;
}
