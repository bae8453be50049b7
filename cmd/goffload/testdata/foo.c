/* The library of the relocatable (-r) flow: foo offloads a target region. */
#ifdef NEW_OPENMP
#define DT enter
#else
#define DT to
#endif
#define PRAGMA(x) _Pragma(#x)
int gvar = 42;
PRAGMA(omp declare target DT(gvar))
int foo(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = n + gvar + 1; }
  return r;
}
