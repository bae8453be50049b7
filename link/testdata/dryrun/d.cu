#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
__device__ int d(int x){return x+1;}
