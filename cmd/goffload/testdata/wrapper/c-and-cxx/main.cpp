#include "../offload.h"
#include "blend.h"
int main() {
  int a[4] = {0, 100, 200, 300}, b[4] = {400, 300, 200, 100}, out[4];
  printf("blend: on device %d\n", blend(a, b, out, 4));
  printf("out = %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  return 0;
}
