#include "hip.h"

/* Without -fgpu-rdc: each object holds its own fatbin and registers it. */
__device__ int cvar = 11;
__constant__ float ccon[2] = {1.5f, 2.5f};
__managed__ int cmanaged = 12;
static __device__ int twice(int x) { return 2 * x; }
__global__ void ckern(int *p) { *p = twice(cvar) + ccon[0] + cmanaged; }
extern "C" void launch_c(int *p) { ckern<<<1, 1>>>(p); }
