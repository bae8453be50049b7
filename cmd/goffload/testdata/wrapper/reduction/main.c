#include "../offload.h"
long dot(const int *a, const int *b, int n);
void minmax(const int *a, int n, int *lo, int *hi, int *on_device);
int main(void) {
  enum { N = 1000 };
  static int a[N], b[N];
  for (int i = 0; i < N; i++) a[i] = (i * 37) % 101 - 50, b[i] = i % 7;
  printf("dot = %ld\n", dot(a, b, N));
  int lo, hi, dev;
  minmax(a, N, &lo, &hi, &dev);
  printf("min = %d, max = %d, on device %d\n", lo, hi, dev);
  return 0;
}
