/* HIP without the HIP headers: the attributes the headers define. */
#define __host__ __attribute__((host))
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
struct dim3 { unsigned x, y, z; __host__ __device__ dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
extern "C" int __hipPushCallConfiguration(dim3, dim3, unsigned long = 0, hipStream_t = 0);
extern "C" int __hipPopCallConfiguration(dim3 *, dim3 *, unsigned long *, hipStream_t *);
template <class T, int dim = 1, int mode = 0>
struct __attribute__((device_builtin_texture_type)) texture { int handle; };
template <class T, int dim = 1>
struct __attribute__((device_builtin_surface_type)) surface { int handle; };

__device__ int dvar = 1;
__constant__ int cvar[4] = {2};
__managed__ int mvar = 3;
texture<float, 2, 0> tex;
surface<void, 3> surf;
__global__ void kern(int *p) { *p = dvar + cvar[0] + mvar; }
__global__ void other(float f) {}
extern "C" void launch(int *p) { kern<<<1, 1>>>(p); other<<<2, 3>>>(1.5f); }
