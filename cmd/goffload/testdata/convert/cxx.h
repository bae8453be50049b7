/* What the two sources of the C++ program share. The constructor is inline:
   clang-19 crashes compiling a declare-target global whose constructor is
   defined out of the class. No unified_shared_memory here: with it, clang
   builds no device constructors (see usm_main.c for it). */
#pragma omp requires unified_address
struct S {
  int v;
  S(int x) : v(x * x + 1) {}
};
int libwork(int n);
int thrice(int x);
#pragma omp declare target
extern S s;
extern int counter;
#pragma omp end declare target
