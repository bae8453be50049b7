/* Device code whose one global symbol is hidden: nothing outside the
   device image can want it. */
#pragma omp begin declare target
__attribute__((visibility("hidden"))) int hidden_twice(int x) { return 2 * x; }
#pragma omp end declare target
