#include "../offload.h"
int left(int x, int *on_device);
int right(int x);
int main(void) {
  int dev = 0;
  printf("left(5) = %d\n", left(5, &dev));
  printf("right(5) = %d\n", right(5));
  printf("part: on device %d\n", dev);
  int m = 0;
#pragma omp target map(from: m)
  m = 42;
  printf("main: %d\n", m);
  return 0;
}
