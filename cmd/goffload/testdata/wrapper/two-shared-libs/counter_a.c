#include "../offload.h"
#pragma omp begin declare target
static int hits;
#pragma omp end declare target
int a_hit(int by) {
  int h = 0;
#pragma omp target map(from: h)
  {
    hits += by;
    h = hits;
  }
  return h;
}
