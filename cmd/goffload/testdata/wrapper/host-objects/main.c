#include "../offload.h"
int cube_sum(int n, int *on_device);
int square_sum(int n);
void show(const char *what, int v);
int clamp(int v, int lo, int hi);
int main(void) {
  int dev = 0;
  show("cubes", cube_sum(10, &dev));
  show("squares", square_sum(10));
  show("clamped", clamp(cube_sum(20, &dev), 0, 9999));
  show("device", dev);
  return 0;
}
