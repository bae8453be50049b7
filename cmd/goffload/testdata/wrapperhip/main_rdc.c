/* The host side of a.hip and b.hip (the latter from libk.a): compiled as C,
   linked with clang --hip-link -fgpu-rdc. */
#include <stdio.h>
void launch_a(int *p);
void launch_b(long *p);
int main(void) {
  int x = 0;
  long y = 0;
  launch_a(&x);
  launch_b(&y);
  puts("main done");
  return 0;
}
