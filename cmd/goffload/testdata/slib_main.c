#include <stdio.h>
int f(int n);
int main(void) {
  int s = 0;
#pragma omp target map(tofrom: s)
  s = 7;
  printf("s = %d, f(10) = %d\n", s, f(10));
  return 0;
}
