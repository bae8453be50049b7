#include "../offload.h"
int run(int n);
int main(void) {
  printf("run(5) = %d\n", run(5));
  return 0;
}
