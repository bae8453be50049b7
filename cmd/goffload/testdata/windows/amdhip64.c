#include <stdio.h>
__declspec(dllexport) void** __hipRegisterFatBinary(void* d){ printf("__hipRegisterFatBinary %p\n", d); static void* h; return &h; }
__declspec(dllexport) void __hipRegisterFunction(void** m, const void* hf, char* df, const char* dn, int t, void* a, void* b, void* c, void* d, int* e){ printf("__hipRegisterFunction %s\n", dn); }
__declspec(dllexport) void __hipRegisterVar(void** m, char* h, char* d, const char* n, int ext, size_t sz, int c, int g){ printf("__hipRegisterVar %s %zu\n", n, sz); }
__declspec(dllexport) void __hipUnregisterFatBinary(void** m){ printf("__hipUnregisterFatBinary\n"); }
__declspec(dllexport) void __hipRegisterManagedVar(void *a, void **b, void *c, const char *d, size_t e, unsigned f){ printf("__hipRegisterManagedVar %s\n", d); }
__declspec(dllexport) void __hipRegisterSurface(void **a, void *b, char *c, const char *d, int e, int f){ printf("__hipRegisterSurface %s\n", d); }
__declspec(dllexport) void __hipRegisterTexture(void **a, void *b, char *c, const char *d, int e, int f, int g){ printf("__hipRegisterTexture %s\n", d); }
typedef struct { unsigned x, y, z; } dim3;
__declspec(dllexport) int __hipPushCallConfiguration(dim3 g, dim3 b, size_t s, void* st){ return 0; }
__declspec(dllexport) int __hipPopCallConfiguration(dim3 *g, dim3 *b, size_t *s, void** st){ return 0; }
__declspec(dllexport) int hipLaunchKernel(const void* f, dim3 g, dim3 b, void** a, size_t s, void* st){ printf("hipLaunchKernel %p\n", f); return 0; }
