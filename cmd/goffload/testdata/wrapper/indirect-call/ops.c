#include "../offload.h"
int add(int a, int b) { return a + b; }
int mul(int a, int b) { return a * b; }
int sub(int a, int b) { return a - b; }
#pragma omp declare target DT(add, mul, sub) indirect
