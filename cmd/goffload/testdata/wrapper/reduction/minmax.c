#include "../offload.h"
void minmax(const int *a, int n, int *lo, int *hi, int *on_device) {
  int mn = a[0], mx = a[0], dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target teams distribute parallel for reduction(min: mn) reduction(max: mx) map(to: a[0:n])
  for (int i = 0; i < n; i++) {
    if (a[i] < mn) mn = a[i];
    if (a[i] > mx) mx = a[i];
  }
#pragma omp target map(from: dev)
  ON_DEVICE(dev, probe);
  *lo = mn, *hi = mx, *on_device = dev;
}
