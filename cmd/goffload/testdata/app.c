#include <stdio.h>
int foo(int);
int main(void) { printf("foo(1)=%d\n", foo(1)); return 0; }
