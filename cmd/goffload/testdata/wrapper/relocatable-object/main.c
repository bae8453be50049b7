#include "../offload.h"
int histogram(const int *v, int n, int *bins, int nbins, int max);
int main(void) {
  int v[40], bins[4] = {0}, dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: v, dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < 40; i++) v[i] = (i * i) % 100;
  }
  printf("main: on device %d\n", dev);
  printf("histogram: on device %d\n", histogram(v, 40, bins, 4, 99));
  printf("bins = %d %d %d %d\n", bins[0], bins[1], bins[2], bins[3]);
  return 0;
}
