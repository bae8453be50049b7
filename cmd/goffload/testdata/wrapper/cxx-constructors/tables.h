struct Table {
  int v[8];
  explicit Table(int k) {
    for (int i = 0; i < 8; i++) v[i] = i * i * k;
  }
  int at(int i) const { return v[i]; }
};
struct Scale {
  double factor;
  int built;
  Scale(double f) : factor(f), built(1) {}
  double apply(double x) const { return built ? x * factor : -1; }
};
#pragma omp begin declare target
extern Table squares;
extern Table triple_squares;
extern Scale half;
#pragma omp end declare target
