#include "../offload.h"
int a_hit(int by);
int b_hit(int by, int *on_device);
int main(void) {
  int dev = 0;
  for (int i = 1; i <= 3; i++) printf("a_hit(%d) = %d\n", i, a_hit(i));
  for (int i = 1; i <= 3; i++) printf("b_hit(%d) = %d\n", i, b_hit(i, &dev));
  printf("libb: on device %d\n", dev);
  return 0;
}
