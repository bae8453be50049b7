#include "../offload.h"
/* Chebyshev polynomials T_k(x) for integer x by their recurrence. */
long chebyshev(int k, long x) {
  long t = 0;
#pragma omp target map(from: t)
  {
    long a = 1, b = x;
    for (int i = 0; i < k; i++) {
      long c = 2 * x * b - a;
      a = b, b = c;
    }
    t = a;
  }
  return t;
}
