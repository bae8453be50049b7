/* An OpenMP offloading program: a target region and a declare-target global. */
int printf(const char *, ...);
#pragma omp declare target
int dev_counter = 3;
#pragma omp end declare target
int main(void) {
  int x = 1;
#pragma omp target map(tofrom: x)
  x += dev_counter;
  printf("x %d\n", x);
  return 0;
}
