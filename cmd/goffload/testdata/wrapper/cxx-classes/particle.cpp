#include "particle.h"
namespace phys {
#pragma omp begin declare target
void Particle::push(Vec f, double dt) {
  vel.x += f.x / mass * dt;
  vel.y += f.y / mass * dt;
}
void Particle::move(double dt) {
  pos.x += vel.x * dt;
  pos.y += vel.y * dt;
}
double Particle::energy() const { return 0.5 * mass * (vel.x * vel.x + vel.y * vel.y); }
double kinetic(const Particle &p) { return p.energy(); }
double kinetic(const Particle *ps, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e += kinetic(ps[i]);
  return e;
}
#pragma omp end declare target
}  // namespace phys
