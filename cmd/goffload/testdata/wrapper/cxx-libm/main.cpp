#include <cmath>
#include "../offload.h"
float diagonal(float a, float b, int *on_device);
float edge(float volume);
int main() {
  int dev = 0;
  float d = diagonal(3, 4, &dev);
  long double l = std::log(static_cast<long double>(d));
  printf("diagonal = %.3f, on device %d\n", d, dev);
  printf("log(diagonal) = %.3Lf\n", l);
  printf("edge of a cube of 27 = %.3f\n", edge(27));
  return 0;
}
