#include "../offload.h"
#include "codec.h"
int main() {
  unsigned char msg[] = "offload";
  Codec c(5);
  int dev = c.encode(msg, 7);
  printf("encode: on device %d\n", dev);
  for (int i = 0; i < 7; i++) printf("%02x", msg[i]);
  printf("\n");
  return 0;
}
