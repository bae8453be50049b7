#include <cstdio>
struct S { int v; S(int x) : v(x * 3) {} };
#pragma omp declare target
S s(7);
int ind(int x) { return x + 1; }
#pragma omp end declare target
int main() {
  int r = 0;
#pragma omp target map(from: r)
  r = s.v;
  printf("s.v on device = %d\n", r);
  return 0;
}
