#include <stdlib.h>
#include "../offload.h"
#pragma omp requires unified_shared_memory
int prefix_sum(long *v, int n);
long counter;
int main(void) {
  long *v = malloc(10 * sizeof *v);
  for (int i = 0; i < 10; i++) v[i] = i + 1;
  printf("prefix_sum: on device %d\n", prefix_sum(v, 10));
  printf("v[9] = %ld, v[4] = %ld\n", v[9], v[4]);
#pragma omp target map(tofrom: counter)
  counter += v[9];
  printf("counter = %ld\n", counter);
  free(v);
  return 0;
}
