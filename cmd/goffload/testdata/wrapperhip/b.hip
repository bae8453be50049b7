#include "hip.h"

__device__ int bvar = 7;
__constant__ double bcon = 0.5;
__managed__ long bmanaged[3] = {8, 9, 10};
__device__ int scale(int x) { return 3 * x + bcon; }
__global__ void bkern(long *p) { p[0] = scale(bmanaged[1]); }
extern "C" void launch_b(long *p) { bkern<<<2, 32>>>(p); }
