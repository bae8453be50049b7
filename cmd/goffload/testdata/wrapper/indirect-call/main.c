#include "../offload.h"
int add(int, int);
int mul(int, int);
int sub(int, int);
#pragma omp declare target DT(add, mul, sub) indirect
int main(void) {
  int (*ops[3])(int, int) = {add, mul, sub};
  const char *names[3] = {"add", "mul", "sub"};
  for (int k = 0; k < 3; k++) {
    int (*op)(int, int) = ops[k];
    int r = 0, dev = 0;
    uintptr_t probe = HOST_PROBE;
#pragma omp target map(from: r, dev)
    {
      ON_DEVICE(dev, probe);
      r = op(12, 5);
    }
    printf("%s(12, 5) = %d, on device %d\n", names[k], r, dev);
  }
  return 0;
}
