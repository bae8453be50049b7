#include "../offload.h"
#include "vec.h"
int main(void) {
  double d[6] = {1, 2, 3, 4, 5, 6};
  struct vec v = {6, d};
  int dev = 0;
  vec_scale(&v, 1.5, &dev);
  double sum = 0;
#pragma omp target map(tofrom: v, sum)
  for (int i = 0; i < v.len; i++) sum += v.data[i];
  printf("vec_scale: on device %d\n", dev);
  printf("d = %.1f %.1f %.1f, sum = %.2f\n", d[0], d[1], d[5], sum);
  return 0;
}
