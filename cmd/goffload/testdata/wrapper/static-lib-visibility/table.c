/* Device code with a local function and a visible global that points to
   it. */
#pragma omp begin declare target
static int thrice(int x) { return 3 * x; }
int (*table_fn)(int) = thrice;
#pragma omp end declare target
