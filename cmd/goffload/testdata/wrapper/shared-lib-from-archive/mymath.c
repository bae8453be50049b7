#include "../offload.h"
int mymath_version(void) {
  int v = 0;
#pragma omp target map(from: v)
  v = 3;
  return v;
}
