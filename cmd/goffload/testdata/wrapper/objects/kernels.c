#include "../offload.h"
#pragma omp begin declare target
extern int factor;
int scaled(int x);
#pragma omp end declare target
int saxpy(int n) {
  int sum = 0, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: sum, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) sum += scaled(i) + 1;
  }
  printf("kernels: on device %d\n", dev);
  return sum;
}
