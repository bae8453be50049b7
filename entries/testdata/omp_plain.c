/* Entries of every OpenMP kind but requires: `declare target` to/enter and
   link globals, an indirect function, and two target regions. Compiled by
   clang 15 with -fopenmp-version=51 (no `enter`), by later clangs with
   -fopenmp-version=52 -DUSE_ENTER, by clang 13 and 14 with -DNO_INDIRECT. */
#ifdef USE_ENTER
#define DT enter
#else
#define DT to
#endif
#define PRAGMA(x) _Pragma(#x)
int gto = 1;
PRAGMA(omp declare target DT(gto))
int genter = 2;
PRAGMA(omp declare target DT(genter))
int a_name_longer_than_sixteen_bytes = 3;
PRAGMA(omp declare target DT(a_name_longer_than_sixteen_bytes))
int glink[8];
#pragma omp declare target link(glink)
int ifn(int x) { return x * 2; }
#ifdef NO_INDIRECT /* clang 13 and 14 have no `indirect` clause */
PRAGMA(omp declare target DT(ifn))
#else
PRAGMA(omp declare target indirect DT(ifn))
#endif
int k1(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = n + gto + genter + a_name_longer_than_sixteen_bytes; }
  return r;
}
int k2(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = n * 2 + glink[0]; }
  return r;
}
