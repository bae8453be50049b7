template <int N>
struct Ring {
  int v[N];
  int head;
  void push(int x) {
    v[head] = x;
    head = (head + 1) % N;
  }
  int weighted(const int *w) const {
    int s = 0;
    for (int i = 0; i < N; i++) s += v[(head + i) % N] * w[i];
    return s;
  }
};
struct Weights {
  int w[4];
  Weights() {
    for (int i = 0; i < 4; i++) w[i] = i + 1;
  }
};
#pragma omp begin declare target
extern Weights weights;
#pragma omp end declare target
int ring_filter(const int *in, int n, int *out, int *on_device);
