#include "../offload.h"
#include "algo.h"
long stats_int(const int *a, int n) {
  long r = 0;
#pragma omp target map(to: a[0:n]) map(from: r)
  r = dot(a, a, n);
  return r;
}
double stats_double(const double *a, int n, int *on_device) {
  double r = 0;
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: a[0:n]) map(from: r, dev)
  {
    ON_DEVICE(dev, probe);
    Fixed<double, 3> f = {{a[0], a[1], a[2]}};
    r = dot(a, a, n) + f.sum();
  }
  *on_device = dev;
  return r;
}
