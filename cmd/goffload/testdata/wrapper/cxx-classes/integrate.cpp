#include "../offload.h"
#include "particle.h"
namespace phys {
int simulate(Particle *ps, int n, int steps) {
  int dev = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(tofrom: ps[0:n]) map(from: dev)
  {
    ON_DEVICE(dev, probe);
    for (int s = 0; s < steps; s++)
      for (int i = 0; i < n; i++) {
        ps[i].push(Vec{0, -10}, 0.5);
        ps[i].move(0.5);
      }
  }
  return dev;
}
}  // namespace phys
