/* A function with a target region and a declare-target global, for a
   static library linked by LLVM 14's driver (which drops its device code)
   and by goffload link --llvm 14 (which keeps it). */
int scale = 3;
#pragma omp declare target to(scale)
int f(int n) {
  int sum = 0;
#pragma omp target map(tofrom: sum)
  for (int i = 0; i < n; i++) sum += i * scale;
  return sum;
}
