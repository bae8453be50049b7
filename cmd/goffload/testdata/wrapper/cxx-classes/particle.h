namespace phys {
struct Vec {
  double x, y;
};
#pragma omp begin declare target
class Particle {
 public:
  Particle() : pos{0, 0}, vel{0, 0}, mass(1) {}
  Particle(Vec p, Vec v, double m) : pos(p), vel(v), mass(m) {}
  void push(Vec force, double dt);
  void move(double dt);
  double energy() const;
  Vec position() const { return pos; }

 private:
  Vec pos, vel;
  double mass;
};
double kinetic(const Particle *ps, int n);
double kinetic(const Particle &p);
#pragma omp end declare target
int simulate(Particle *ps, int n, int steps);
}  // namespace phys
