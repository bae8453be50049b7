#include "../offload.h"
#pragma omp begin declare target
int shift(int x);
#pragma omp end declare target
int right(int x) {
  int r = 0;
#pragma omp target map(from: r)
  r = shift(x) - 1;
  return r;
}
