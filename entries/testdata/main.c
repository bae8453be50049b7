#include <stdio.h>
int k1(int), k2(int);
int main(void) { printf("k1(1)=%d k2(1)=%d\n", k1(1), k2(1)); return 0; }
