/* A translation unit with a declare-target global, a link global, a target
   region and `requires unified_shared_memory`: the entries, name strings and
   requires encoding of every release (convert_test.go). */
#include <stdio.h>
#pragma omp requires unified_shared_memory
int g = 5;
#pragma omp declare target(g)
int l[4] = {1,2,3,4};
#pragma omp declare target link(l)
extern int lib(int);
int main(void) {
  int r = 0;
#pragma omp target map(tofrom: r) map(tofrom: l)
  { r = g + l[2]; g = 7; }
  printf("r=%d lib=%d\n", r, lib(3));
  return 0;
}
