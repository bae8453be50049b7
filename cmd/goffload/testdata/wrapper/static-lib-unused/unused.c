/* Not used by the program: its target region calls helper(). */
#pragma omp begin declare target
int helper(int);
#pragma omp end declare target
int unused(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  r = helper(n);
  return r;
}
