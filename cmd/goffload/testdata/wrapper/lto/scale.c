#include "../offload.h"
void scale(int n, float *x, float a) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: x[0:n], dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) x[i] *= a;
  }
  printf("scale: on device %d\n", dev);
}
