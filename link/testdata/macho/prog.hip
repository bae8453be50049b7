#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __managed__ __attribute__((managed))
typedef struct { unsigned x, y, z; } dim3;
extern "C" int printf(const char *, ...);
extern "C" int __hipPushCallConfiguration(dim3 g, dim3 b, unsigned long long sh = 0, void* st = 0);
extern "C" int __hipPopCallConfiguration(dim3 *g, dim3 *b, unsigned long long *sh, void** st);
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long long, void*);
__device__ int counter;
__device__ float table[64];
__managed__ int shared_flag;
__global__ void kern(int *p) { *p = counter; }
__global__ void scale(float *p, float f) { *p *= f * table[0]; }
template <typename T> __global__ void fill(T *p, T v) { *p = v; }
template __global__ void fill<int>(int *, int);
extern "C" __global__ void plain(void) { shared_flag = 1; }
int main() { printf("host %p %p %p %p\n", (void*)kern, (void*)scale, (void*)fill<int>, (void*)plain); return 0; }
