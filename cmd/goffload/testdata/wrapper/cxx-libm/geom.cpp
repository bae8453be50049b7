#include <math.h>
#include "../offload.h"
float diagonal(float a, float b, int *on_device) {
  float d = 0;
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: d, dev)
  {
    ON_DEVICE(dev, probe);
    d = sqrtf(a * a + b * b);
  }
  *on_device = dev;
  return d;
}
float edge(float volume) {
  float e = 0;
#pragma omp target map(from: e)
  e = cbrtf(volume);
  return e;
}
