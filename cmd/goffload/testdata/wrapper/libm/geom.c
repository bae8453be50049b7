#include <math.h>
#include "../offload.h"
double perimeter(const double *x, const double *y, int n, int *on_device) {
  double p = 0;
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: x[0:n], y[0:n]) map(tofrom: p, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) {
      int j = (i + 1) % n;
      p += hypot(x[j] - x[i], y[j] - y[i]);
    }
    p += cbrt(p) * 0;
  }
  *on_device = dev;
  return p;
}
double side_of_cube(double volume) {
  double s = 0;
#pragma omp target map(from: s)
  s = cbrt(volume);
  return s;
}
