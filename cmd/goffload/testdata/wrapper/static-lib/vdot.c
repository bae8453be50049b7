#include "../offload.h"
long vdot(int n, const int *a, const int *b) {
  long sum = 0;
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: a[0:n], b[0:n]) map(tofrom: sum, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) sum += (long)a[i] * b[i];
  }
  printf("vdot: on device %d\n", dev);
  return sum;
}
