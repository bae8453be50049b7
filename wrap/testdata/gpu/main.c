#include <stdio.h>
void launch(int *p);
int main(void) { int x = 0; launch(&x); puts("main done"); return 0; }
