/* An offloaded program for `goffload link`: three target regions, a
   `declare target` global, a `link` global and an indirect call (LLVM 18+),
   and a requires clause. LLVM 15 and 16 compile it without the `link`
   global (their host-device runtime crashes on one even when clang links
   the program) and without the indirect call (no indirect entries before 18). */
#include <stdio.h>
#pragma omp requires unified_address
#ifdef NEW_OPENMP
#define DT enter
#else
#define DT to
#endif
#define PRAGMA(x) _Pragma(#x)
int counter = 5;
PRAGMA(omp declare target DT(counter))
#ifdef NEW_OPENMP
int table[4] = {1, 2, 3, 4};
#pragma omp declare target link(table)
int thrice(int x) { return 3 * x; }
PRAGMA(omp declare target DT(thrice) indirect)
#endif
int main(void) {
  int a = 0, b = 0, c = 0;
#pragma omp target map(tofrom: a)
  { a = counter + 1; }
#ifdef NEW_OPENMP
  int (*fp)(int) = thrice;
#pragma omp target map(tofrom: b) map(to: table[0:4])
  { b = table[0] + table[3]; }
#pragma omp target map(tofrom: c)
  { c = fp(7); }
#else
#pragma omp target map(tofrom: b)
  { b = counter * 2; }
#pragma omp target map(tofrom: c)
  { c = a + b; }
#endif
  printf("a=%d b=%d c=%d\n", a, b, c);
  return 0;
}
