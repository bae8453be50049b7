/* A member of a static library for `goffload convert` (C): it requires
   unified shared memory, as every source of a program must, and has a
   declare-target global and a `link` global that its target region reads. */
#pragma omp requires unified_shared_memory

int scale = 3;
#pragma omp declare target to(scale)
int weights[3] = {2, 4, 8};
#pragma omp declare target link(weights)

/* With unified shared memory the device writes *p where the host reads it,
   even though p is only mapped `to`. */
int libwork(int *p, int n) {
  int r = 0;
#pragma omp target map(tofrom: r) map(to: p[0:1], weights[0:3])
  {
    r = n * scale + weights[2];
    *p = 2;
  }
  return r;
}
