/* A member of a static library for `goffload convert` (C++): declare-target
   globals, one built by a constructor (clang up to 17 registers it with a
   ctor entry, 18 and later with the device image's .init_array), a `link`
   global, and a function called through a pointer on the device, registered
   `indirect` by clang 18 and later. */
#include "cxx.h"

#pragma omp declare target
S s(7);
int counter = 5;
int thrice(int x) { return 3 * x + s.v; }
#pragma omp end declare target
#if __clang_major__ >= 18
#pragma omp declare target to(thrice) indirect
#endif

int table[4] = {1, 2, 3, 4};
#pragma omp declare target link(table)

int libwork(int n) {
  int r = 0;
#pragma omp target map(tofrom: r) map(to: table[0:4])
  { r = s.v + counter * n + table[3]; }
  return r;
}
