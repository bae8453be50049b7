#include "../offload.h"
int kern_scale(int *v, int n, int by);
int kern_count(void);
int main(void) {
  int v[5] = {1, 2, 3, 4, 5}, dev = 0;
  uintptr_t probe = HOST_PROBE;
  printf("libkern: on device %d\n", kern_scale(v, 5, 3));
  kern_scale(v, 5, 2);
#pragma omp target map(tofrom: v[0:5]) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < 5; i++) v[i] += 1;
  }
  printf("main: on device %d\n", dev);
  printf("v = %d %d %d %d %d, kern_calls = %d\n", v[0], v[1], v[2], v[3], v[4], kern_count());
  return 0;
}
