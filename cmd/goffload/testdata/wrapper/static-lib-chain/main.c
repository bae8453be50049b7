#include "../offload.h"
int mean(const int *v, int n);
int sumsq(const int *v, int n);
int main(void) {
  int v[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  printf("mean = %d\n", mean(v, 10));
  printf("sumsq = %d\n", sumsq(v, 10));
  return 0;
}
