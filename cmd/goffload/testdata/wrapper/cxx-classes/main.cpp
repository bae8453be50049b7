#include "../offload.h"
#include "particle.h"
int main() {
  phys::Particle ps[3] = {
      phys::Particle({0, 100}, {1, 0}, 1),
      phys::Particle({5, 50}, {0, 2}, 2),
      phys::Particle(),
  };
  printf("simulate: on device %d\n", phys::simulate(ps, 3, 4));
  for (int i = 0; i < 3; i++) printf("p%d at (%.2f, %.2f)\n", i, ps[i].position().x, ps[i].position().y);
  double e = 0;
#pragma omp target map(to: ps) map(from: e)
  e = phys::kinetic(ps, 3);
  printf("kinetic energy %.2f\n", e);
  return 0;
}
