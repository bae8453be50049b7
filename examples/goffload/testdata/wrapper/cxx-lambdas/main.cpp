#include "../offload.h"
#include "apply.h"
int main() {
  int v[5] = {1, 2, 3, 4, 5};
  printf("run_lambda: on device %d\n", run_lambda(v, 5, 3));
  run_functor(v, 5);
  int total = 0;
#pragma omp target map(to: v) map(from: total)
  {
    auto sum = [&]() {
      int s = 0;
      for (int i = 0; i < 5; i++) s += v[i];
      return s;
    };
    total = sum();
  }
  printf("v = %d %d %d %d %d, total = %d\n", v[0], v[1], v[2], v[3], v[4], total);
  return 0;
}
