#include "../offload.h"
long dot(const int *a, const int *b, int n) {
  long s = 0;
#pragma omp target teams distribute parallel for reduction(+: s) map(to: a[0:n], b[0:n])
  for (int i = 0; i < n; i++) s += (long)a[i] * b[i];
  return s;
}
