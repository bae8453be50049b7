/* A member of the static library that the program does not use: its
   device code refers to a symbol that nothing defines. */
extern int nowhere(int);
#pragma omp declare target to(nowhere)
int unused(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  r = nowhere(n);
  return r;
}
