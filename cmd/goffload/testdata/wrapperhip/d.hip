#include "hip.h"

__device__ short dvar[5] = {13};
__managed__ double dmanaged = 14;
__global__ void dkern(short *p) { *p = dvar[0] + dmanaged; }
extern "C" void launch_d(short *p) { dkern<<<3, 7>>>(p); }
