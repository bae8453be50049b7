#include "../offload.h"
void vadd(int n, const int *a, const int *b, int *c);
long vdot(int n, const int *a, const int *b);
int main(void) {
  int a[16], b[16], c[16];
  for (int i = 0; i < 16; i++) a[i] = i, b[i] = 100 - i;
  vadd(16, a, b, c);
  printf("c[0] = %d, c[15] = %d\n", c[0], c[15]);
  printf("a.b = %ld\n", vdot(16, a, b));
  return 0;
}
