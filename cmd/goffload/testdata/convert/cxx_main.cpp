/* The program of cxx_lib.cpp's library: a declare-target global built by a
   constructor of its own, target regions that read the library's globals,
   and (clang 18 and later) a call through a pointer to an `indirect`
   function. */
#include <stdio.h>
#include "cxx.h"

struct T {
  int w;
  T(int x) : w(x * 10 + 2) {}
};
#pragma omp declare target
T t(4);
#pragma omp end declare target
#if __clang_major__ >= 18
#pragma omp declare target to(thrice) indirect
#endif

int main() {
  int a = 0, b = 0, c = 0;
#pragma omp target map(tofrom: a)
  { a = t.w + s.v + counter; }
  int (*fp)(int) = thrice;
#pragma omp target map(tofrom: c)
  {
#if __clang_major__ >= 18
    c = fp(7);
#else
    c = thrice(7);
#endif
  }
  b = libwork(10);
  printf("a=%d b=%d c=%d\n", a, b, c);
  (void)fp;
  return 0;
}
