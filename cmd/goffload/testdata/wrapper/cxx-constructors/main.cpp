#include "../offload.h"
#include "tables.h"
int main() {
  // The host's copies change; the device's keep what their constructors made.
  squares.v[5] = -1;
  half.factor = 100;
  int a = 0, b = 0, dev = 0;
  double h = 0;
  uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: a, b, h, dev)
  {
    ON_DEVICE(dev, probe);
    a = squares.at(5);
    b = triple_squares.at(7);
    h = half.apply(9);
  }
  printf("on device %d: squares[5] = %d, triple_squares[7] = %d, half(9) = %.1f\n", dev, a, b, h);
  printf("host: squares[5] = %d, half(9) = %.1f\n", squares.at(5), half.apply(9));
  return 0;
}
