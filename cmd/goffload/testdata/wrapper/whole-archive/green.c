#include "../offload.h"
#include "plugins.h"
PLUGIN(green)
static int run_green(int *on_device) {
  int v = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: v, dev)
  {
    ON_DEVICE(dev, probe);
    v = 0x00ff00 >> 8;
  }
  *on_device = dev;
  return v;
}
