#include "../offload.h"
void scale(int n, float *x, float a);
float norm1(int n, const float *x);
int main(void) {
  float x[8];
  for (int i = 0; i < 8; i++) x[i] = i - 4;
  scale(8, x, 2);
  printf("x[0] = %.1f, x[7] = %.1f\n", x[0], x[7]);
  printf("|x|_1 = %.1f\n", norm1(8, x));
  return 0;
}
