// An OpenMP target region, compiled with -flto, -flto=thin and
// -ffat-lto-objects by the tests of bitcode host objects.
int scale = 3;

int offload(int x) {
  int r = 0;
#pragma omp target map(tofrom : r)
  r = x * scale;
  return r;
}
