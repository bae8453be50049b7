#include "../offload.h"
#pragma omp begin declare target
int bin_of(int v, int nbins, int max);
#pragma omp end declare target
int histogram(const int *v, int n, int *bins, int nbins, int max) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(to: v[0:n]) map(tofrom: bins[0:nbins]) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < n; i++) bins[bin_of(v[i], nbins, max)]++;
  }
  return dev;
}
