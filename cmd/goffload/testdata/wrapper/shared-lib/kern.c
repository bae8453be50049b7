#include "../offload.h"
#pragma omp begin declare target
int kern_calls;
#pragma omp end declare target
int kern_scale(int *v, int n, int by) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: v[0:n]) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) v[i] *= by;
    kern_calls++;
  }
  return dev;
}
int kern_count(void) {
  int c = 0;
#pragma omp target map(from: c)
  c = kern_calls;
  return c;
}
