/* OpenMP on the host only: no offload target. */
int square_sum(int n) {
  int s = 0;
#pragma omp parallel for reduction(+: s)
  for (int i = 1; i <= n; i++) s += i * i;
  return s;
}
