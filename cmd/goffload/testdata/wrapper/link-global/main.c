#include "../offload.h"
extern int coeffs[6];
extern double bias;
#pragma omp declare target link(coeffs, bias)
int main(void) {
  double r = 0;
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: coeffs, bias) map(from: r, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < 6; i++) r += coeffs[i] * (i + bias);
  }
  printf("on device %d, r = %.1f\n", dev, r);
  coeffs[0] = 100;
#pragma omp target map(tofrom: coeffs[0:2])
  {
    coeffs[0] += 1;
    coeffs[1] *= 10;
  }
  printf("coeffs = %d %d %d\n", coeffs[0], coeffs[1], coeffs[2]);
  return 0;
}
