/* The program of the frozen linked files of mixing_test.go (make.sh). */
#include <stdio.h>
int g = 1;
#pragma omp declare target to(g)
int main(void) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = g + 41; }
  printf("%d\n", r);
  return r != 42;
}
