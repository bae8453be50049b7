#pragma omp begin declare target
int total(const int *v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  return s;
}
int square(int x) { return x * x; }
#pragma omp end declare target
