#include "../offload.h"
/* Horner's rule on the device for each x. */
int poly_eval(const int *c, int degree, const int *x, int *y, int n) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: c[0:degree + 1], x[0:n]) map(from: y[0:n], dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) {
      int acc = 0;
      for (int k = degree; k >= 0; k--) acc = acc * x[i] + c[k];
      y[i] = acc;
    }
  }
  return dev;
}
