#include "../offload.h"
double perimeter(const double *x, const double *y, int n, int *on_device);
double side_of_cube(double volume);
int main(void) {
  double x[4] = {0, 3, 3, 0}, y[4] = {0, 0, 4, 4};
  int dev = 0;
  double p = perimeter(x, y, 4, &dev);
  printf("perimeter = %.3f, on device %d\n", p, dev);
  printf("side of a cube of 343 = %.3f\n", side_of_cube(343));
  return 0;
}
