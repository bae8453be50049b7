#include "../offload.h"
int saxpy(int n);
int main(void) {
  printf("saxpy(8) = %d\n", saxpy(8));
  printf("saxpy(100) = %d\n", saxpy(100));
  return 0;
}
