#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
typedef struct { unsigned x, y, z; } dim3;
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
__device__ int dvar = 1;
__constant__ int cvar = 2;
extern __device__ int evar;
__managed__ int mvar = 3;
__managed__ double mdv = 4;
__global__ void kern(int *p) { *p = dvar + cvar + mvar; }
