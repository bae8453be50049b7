#include "apply.h"
int run_functor(int *v, int n) {
  Poly p = {2, 3};
#pragma omp target map(tofrom: v[0:n])
  apply_all(v, n, p);
  return n;
}
