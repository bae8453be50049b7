/* Used only by the device code of unused.c. */
#pragma omp begin declare target
int helper(int n) { return n + 1; }
#pragma omp end declare target
