#include "../offload.h"
#pragma omp begin declare target
static float absf(float v) { return v < 0 ? -v : v; }
#pragma omp end declare target
float norm1(int n, const float *x) {
  float s = 0;
#pragma omp target map(to: x[0:n]) map(tofrom: s)
  for (int i = 0; i < n; i++) s += absf(x[i]);
  return s;
}
