#include "../offload.h"
int used(int n);
int main(void) {
  printf("used(10) = %d\n", used(10));
  return 0;
}
