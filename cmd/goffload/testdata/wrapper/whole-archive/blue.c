#include "../offload.h"
#include "plugins.h"
PLUGIN(blue)
static int run_blue(int *on_device) {
  int v = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: v, dev)
  {
    ON_DEVICE(dev, probe);
    v = 0x0000ff * 2;
  }
  *on_device = dev;
  return v;
}
