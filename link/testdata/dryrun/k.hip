#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
__device__ int d(int x);
__device__ int v;
__device__ int use(){return d(v);}
