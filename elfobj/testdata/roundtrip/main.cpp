#include <cstdio>
int lib_value(int);
int main() { std::printf("lib_value(20)=%d\n", lib_value(20)); return 0; }
