template <typename T>
T dot(const T *a, const T *b, int n) {
  T s = T();
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
template <typename T, int N>
struct Fixed {
  T v[N];
  static constexpr int size() { return N; }
  T sum() const {
    T s = T();
    for (int i = 0; i < N; i++) s += v[i];
    return s;
  }
};
long stats_int(const int *a, int n);
double stats_double(const double *a, int n, int *on_device);
