#include "../offload.h"
int used(int n);
int main(void) {
  printf("used(4) = %d\n", used(4));
  return 0;
}
