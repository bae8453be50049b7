#include "../offload.h"
#include "ring.h"
int ring_filter(const int *in, int n, int *out, int *on_device) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: in[0:n]) map(from: out[0:n], dev)
  {
    ON_DEVICE(dev, probe);
    Ring<4> r = {{0, 0, 0, 0}, 0};
    for (int i = 0; i < n; i++) {
      r.push(in[i]);
      out[i] = r.weighted(weights.w);
    }
  }
  *on_device = dev;
  return n;
}
