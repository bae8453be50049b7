#include <stdio.h>
void show(const char *what, int v) { printf("%-10s %6d\n", what, v); }
