#include "hip.h"

/* Defined in b.hip, which is in the static library libk.a: the device link
   (-fgpu-rdc) resolves it. */
extern __device__ int scale(int);
extern __device__ int bvar;

__device__ int avar = 1;
__constant__ int acon[4] = {2, 3, 4, 5};
__managed__ int amanaged = 6;
__global__ void akern(int *p) { *p = scale(avar + acon[1] + amanaged) + bvar; }
__global__ void afill(float *p, float f, int n) { for (int i = 0; i < n; i++) p[i] = f; }
extern "C" void launch_a(int *p) { akern<<<1, 1>>>(p); afill<<<4, 64>>>(0, 1.5f, 8); }
