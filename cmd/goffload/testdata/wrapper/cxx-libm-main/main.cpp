#include <cmath>
#include "../offload.h"
int main() {
  float x = 2.0f;
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: x, dev)
  {
    ON_DEVICE(dev, probe);
    x = sqrtf(x);
  }
  printf("sqrtf(2) = %.4f, on device %d\n", x, dev);
  return 0;
}
