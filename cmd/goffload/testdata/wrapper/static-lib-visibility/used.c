#include "../offload.h"
/* The only member the host link takes. */
int used(int n) {
  int r = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: r, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 1; i <= n; i++) r += i * i;
  }
  printf("used: on device %d\n", dev);
  return r;
}
