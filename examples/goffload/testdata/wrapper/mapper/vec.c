#include "../offload.h"
#include "vec.h"
void vec_scale(struct vec *v, double by, int *on_device) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: v[0:1]) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    for (int i = 0; i < v->len; i++) v->data[i] *= by;
  }
  *on_device = dev;
}
