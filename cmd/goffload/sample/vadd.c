/* The built-in example of `goffload demo`: a vector addition offloaded with
   OpenMP to the host-device target. vadd-llvm19.o is
     clang-19 -O1 -fopenmp -fopenmp-version=52 -fopenmp-targets=x86_64-pc-linux-gnu -c vadd.c -o vadd-llvm19.o
   and vadd-device-llvm19.so the device image that `goffload link` links from
   it with clang-19, kept for machines without clang. */
#include <stdio.h>
#define N 1024
float scale = 2.0f;
#pragma omp declare target enter(scale)
int main(void) {
  static float x[N], y[N];
  for (int i = 0; i < N; i++) { x[i] = i; y[i] = 1; }
#pragma omp target teams distribute parallel for map(to: x) map(tofrom: y)
  for (int i = 0; i < N; i++) y[i] += scale * x[i];
  double sum = 0;
  for (int i = 0; i < N; i++) sum += y[i];
  printf("vadd on the OpenMP device: sum = %.0f (want %.0f)\n", sum, N + 2.0 * N * (N - 1) / 2);
  return 0;
}
