/* A stand-in of the CUDA and HIP registration API that logs every call with
   its arguments, so that two links of the same host object (clang's wrapper,
   goffload's) can be compared. Pointers are printed as the symbol that the
   dynamic linker names for them (link with -rdynamic), strings as strings. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The wrapper last registered: this stand-in returns it as the handle. */
static const void *registered;

static const char *sym(const void *p) {
  static char buf[4][256];
  static int n;
  char *b = buf[n++ % 4];
  Dl_info info;
  if (!p) return "null";
  if (p == registered) return "<handle>";
  if (dladdr(p, &info) && info.dli_sname && info.dli_saddr == p) {
    snprintf(b, 256, "%s", info.dli_sname);
  } else if (dladdr(p, &info) && info.dli_sname) {
    snprintf(b, 256, "%s+%ld", info.dli_sname, (long)((const char *)p - (const char *)info.dli_saddr));
  } else if (dladdr(p, &info)) {
    /* A local symbol: its place in the executable, which two links of the
       same objects may move. */
    snprintf(b, 256, "<local>");
  } else {
    snprintf(b, 256, "<unknown>");
  }
  return b;
}

static uint64_t fnv(const unsigned char *p, uint64_t n) {
  uint64_t h = 14695981039346656037ull;
  for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

struct fatbin_wrapper { int32_t magic, version; const void *image, *reserved; };

/* The size of a fatbin: a clang offload bundle's last entry end, else 20
   bytes (the stand-in fatbinary's marker). */
static uint64_t fatbin_size(const unsigned char *p) {
  if (memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0) return 20;
  uint64_t n, end = 0, off = 32;
  memcpy(&n, p + 24, 8);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t o, s, l;
    memcpy(&o, p + off, 8); memcpy(&s, p + off + 8, 8); memcpy(&l, p + off + 16, 8);
    if (o + s > end) end = o + s;
    off += 24 + l;
  }
  return end;
}

static void *fatbin(const char *api, const struct fatbin_wrapper *w) {
  uint64_t n = fatbin_size(w->image);
  printf("%sRegisterFatBinary(magic=%#x version=%d image: %llu bytes fnv=%016llx reserved=%s)\n", api, w->magic, w->version,
         (unsigned long long)n, (unsigned long long)fnv(w->image, n), sym(w->reserved));
  registered = w;
  return (void *)w;
}

#define API(P)                                                                                                  \
  void **P##RegisterFatBinary(const void *w) { return fatbin(#P, w); }                                          \
  void P##RegisterFatBinaryEnd(void **h) { printf(#P "RegisterFatBinaryEnd(%s)\n", sym(h)); }                   \
  void P##UnregisterFatBinary(void **h) { printf(#P "UnregisterFatBinary(%s)\n", sym(h)); }                     \
  int P##RegisterFunction(void **h, const void *f, char *d, const char *n, int t, void *a, void *b, void *c,    \
                          void *e, int *s) {                                                                    \
    printf(#P "RegisterFunction(%s, %s, %s, %s, %d, %s, %s, %s, %s, %s)\n", sym(h), sym(f), d, n, t, sym(a),    \
           sym(b), sym(c), sym(e), sym(s));                                                                     \
    return 0;                                                                                                   \
  }                                                                                                             \
  void P##RegisterVar(void **h, char *v, char *d, const char *n, int ext, size_t size, int cst, int g) {        \
    printf(#P "RegisterVar(%s, %s, %s, %s, %d, %zu, %d, %d)\n", sym(h), sym(v), d, n, ext, size, cst, g);     \
  }                                                                                                             \
  void P##RegisterManagedVar(void **h, void **shadow, char *v, const char *n, size_t size, unsigned align) {    \
    printf(#P "RegisterManagedVar(%s, %s, %s, %s, %zu, %u)\n", sym(h), sym(shadow), sym(v), n, size, align);   \
  }                                                                                                             \
  void P##RegisterSurface(void **h, const void *s, const void *d, const char *n, int dim, int ext) {            \
    printf(#P "RegisterSurface(%s, %s, %s, %s, %d, %d)\n", sym(h), sym(s), (const char *)d, n, dim, ext);       \
  }                                                                                                             \
  void P##RegisterTexture(void **h, const void *t, const void *d, const char *n, int dim, int norm, int ext) {  \
    printf(#P "RegisterTexture(%s, %s, %s, %s, %d, %d, %d)\n", sym(h), sym(t), (const char *)d, n, dim, norm,   \
           ext);                                                                                                \
  }

API(__cuda)
API(__hip)

int hipLaunchKernel(const void *f, ...) { printf("hipLaunchKernel(%s)\n", sym(f)); return 0; }
int cudaLaunchKernel(const void *f, ...) { printf("cudaLaunchKernel(%s)\n", sym(f)); return 0; }
int __cudaPushCallConfiguration(void) { return 0; }
int __cudaPopCallConfiguration(void) { return 0; }
int __hipPushCallConfiguration(void) { return 0; }
int __hipPopCallConfiguration(void) { return 0; }
int cudaSetupArgument(const void *a, unsigned long size, unsigned long off) { return 0; }
int cudaLaunch(const void *f) { printf("cudaLaunch(%s)\n", sym(f)); return 0; }
int cudaConfigureCall(unsigned long long grid, unsigned gz, unsigned long long block, unsigned bz, unsigned long shmem, void *stream) { return 0; }
