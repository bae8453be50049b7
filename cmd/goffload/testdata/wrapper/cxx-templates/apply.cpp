#include "../offload.h"
#include "apply.h"
int run_lambda(int *v, int n, int k) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: v[0:n]) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    apply_all(v, n, [k](int x, int i) { return x * k - i; });
  }
  return dev;
}
