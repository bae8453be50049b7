/* The host side of c.hip and d.hip (the latter from libd.a), compiled
   without -fgpu-rdc: each object registers its own fatbin. */
#include <stdio.h>
void launch_c(int *p);
void launch_d(short *p);
int main(void) {
  int x = 0;
  short y = 0;
  launch_c(&x);
  launch_d(&y);
  puts("main done");
  return 0;
}
