/* An OpenMP program with one target region, for the runs of the LLVM 14
   registration object (legacy_test.go). */
#include <stdio.h>
#define N 1024
int main(void) {
  int a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = 2 * i;
  }
#pragma omp target teams distribute parallel for map(to: a, b) map(from: c)
  for (int i = 0; i < N; i++)
    c[i] = a[i] + b[i];
  long s = 0;
  for (int i = 0; i < N; i++)
    s += c[i];
  printf("sum = %ld\n", s);
  return 0;
}
