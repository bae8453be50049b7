template <typename F>
void apply_all(int *v, int n, F f) {
  for (int i = 0; i < n; i++) v[i] = f(v[i], i);
}
struct Poly {
  int a, b;
  int operator()(int x, int i) const { return a * x + b * i; }
};
int run_functor(int *v, int n);
int run_lambda(int *v, int n, int k);
