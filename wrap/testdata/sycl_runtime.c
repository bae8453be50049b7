/* A stand-in for libsycl of LLVM main after 22, for the programs of
 * TestSYCLBinaryRunsUnderQEMU: __sycl_register_lib and
 * __sycl_unregister_lib print what each registration object passes them
 * (the size, an FNV-1a hash of the bytes at the start pointer, whether the
 * pointer is 8-byte aligned as OffloadBinary::create requires), and
 * unregistration checks that it gets what a registration got, once. A
 * program holds the registration objects of several binaries. */
#include <stdint.h>
#include <stdio.h>

#define MAX_BINARIES 64

static struct {
  const void *start;
  uint64_t size;
  int unregistered;
} registered[MAX_BINARIES];
static int nregistered;

static uint64_t fnv1a(const unsigned char *p, uint64_t n) {
  uint64_t h = 14695981039346656037ull;
  for (uint64_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

void __sycl_register_lib(const void *start, uint64_t size) {
  if (nregistered < MAX_BINARIES) {
    registered[nregistered].start = start;
    registered[nregistered].size = size;
    nregistered++;
  }
  printf("register: %llu bytes, fnv %016llx, aligned %d\n", (unsigned long long)size,
         (unsigned long long)fnv1a(start, size), (int)((uintptr_t)start % 8 == 0));
}

void __sycl_unregister_lib(const void *start, uint64_t size) {
  for (int i = 0; i < nregistered; i++) {
    if (registered[i].start == start && registered[i].size == size && !registered[i].unregistered) {
      registered[i].unregistered = 1;
      printf("unregister: same binary\n");
      return;
    }
  }
  printf("unregister: another binary\n");
}

int main(void) {
  printf("main\n");
  return 0;
}
