#include "../offload.h"
void vadd(int n, const int *a, const int *b, int *c) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target teams distribute parallel for map(to: a[0:n], b[0:n]) map(from: c[0:n])
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
#pragma omp target map(from: dev)
  ON_DEVICE(dev, probe);
  printf("vadd: on device %d\n", dev);
}
