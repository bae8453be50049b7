/* `#pragma omp requires unified_shared_memory`: a requires entry (LLVM 19+)
   and `declare target to` globals through reference pointers. */
#pragma omp requires unified_shared_memory
#ifdef USE_ENTER
#define DT enter
#else
#define DT to
#endif
#define PRAGMA(x) _Pragma(#x)
int usm_global = 1;
PRAGMA(omp declare target DT(usm_global))
int usm_kernel(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = n + usm_global; }
  return r;
}
