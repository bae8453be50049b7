#include "../offload.h"
#include "algo.h"
#include "apply.h"
int main() {
  int a[5] = {1, 2, 3, 4, 5};
  double d[4] = {0.5, 1.5, 2.5, 3.5};
  long self = 0;
  int fsum = 0, size = 0, dev = 0;
#pragma omp target map(to: a) map(from: self, fsum, size)
  {
    self = dot(a, a, 5);
    Fixed<int, 5> f = {{a[0], a[1], a[2], a[3], a[4]}};
    fsum = f.sum();
    size = Fixed<int, 5>::size();
  }
  printf("main: dot = %ld, sum = %d, size = %d\n", self, fsum, size);
  printf("stats_int = %ld\n", stats_int(a, 5));
  double r = stats_double(d, 4, &dev);
  printf("stats_double = %.2f, on device %d\n", r, dev);

  printf("run_lambda: on device %d\n", run_lambda(a, 5, 3));
  run_functor(a, 5);
  int total = 0;
#pragma omp target map(to: a) map(from: total)
  {
    auto sum = [&]() {
      int s = 0;
      for (int i = 0; i < 5; i++) s += a[i];
      return s;
    };
    total = sum();
  }
  printf("a = %d %d %d %d %d, total = %d\n", a[0], a[1], a[2], a[3], a[4], total);
  return 0;
}
