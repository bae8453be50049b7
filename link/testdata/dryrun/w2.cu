#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; };
typedef struct CUstream_st *cudaStream_t;
extern "C" int cudaLaunchKernel(const void *, dim3, dim3, void **, unsigned long, cudaStream_t);
__global__ void k2(int *p) { *p = 2; }
