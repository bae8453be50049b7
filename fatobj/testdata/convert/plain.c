/* A declare-target global and a target region, without requires (convert_test.go). */
int h = 10;
#pragma omp declare target(h)
int lib(int x) {
  int r = 0;
#pragma omp target map(from: r)
  r = x * h;
  return r;
}
