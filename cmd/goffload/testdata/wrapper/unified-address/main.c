#include "../offload.h"
#include "omp_api.h"
#pragma omp requires unified_address
int fill(int *d, int n);
int main(void) {
  int dev = omp_get_default_device();
  int *d = omp_target_alloc(8 * sizeof(int), dev);
  printf("fill: on device %d\n", fill(d, 8));
  int h[8] = {0};
  omp_target_memcpy(h, d, sizeof h, 0, 0, omp_get_initial_device(), dev);
  omp_target_free(d, dev);
  printf("h =");
  for (int i = 0; i < 8; i++) printf(" %d", h[i]);
  printf("\n");
  return 0;
}
