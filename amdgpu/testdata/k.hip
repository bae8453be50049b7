#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
__global__ void k1(int *p) { *p = 1; }
__global__ void kk(int *p){ __attribute__((shared)) static int t[64]; t[__builtin_amdgcn_workitem_id_x()]=1; *p = t[0];}
