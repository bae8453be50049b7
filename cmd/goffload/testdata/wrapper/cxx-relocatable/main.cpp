#include "../offload.h"
#include "ring.h"
int main() {
  int in[6] = {1, 0, 0, 2, 0, 0}, out[6], dev = 0;
  ring_filter(in, 6, out, &dev);
  printf("ring_filter: on device %d\n", dev);
  printf("out =");
  for (int i = 0; i < 6; i++) printf(" %d", out[i]);
  printf("\n");
  return 0;
}
