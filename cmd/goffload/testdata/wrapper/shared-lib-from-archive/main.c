#include "../offload.h"
int poly_eval(const int *c, int degree, const int *x, int *y, int n);
long chebyshev(int k, long x);
int mymath_version(void);
int main(void) {
  int c[3] = {1, -2, 3}, x[4] = {0, 1, 2, 3}, y[4];
  printf("mymath %d\n", mymath_version());
  printf("poly: on device %d\n", poly_eval(c, 2, x, y, 4));
  printf("y = %d %d %d %d\n", y[0], y[1], y[2], y[3]);
  printf("T_5(2) = %ld\n", chebyshev(5, 2));
  return 0;
}
