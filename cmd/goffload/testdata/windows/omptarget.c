#include <stdio.h>
#include <stdint.h>
/* A stand-in libomptarget that logs what the registration code gives it. */
struct entry { uint64_t reserved; uint16_t version, kind; uint32_t flags; void *addr; char *name; uint64_t size, data; void *aux; };
struct image { void *start, *end; struct entry *begin, *stop; };
struct desc { int32_t n; struct image *images; struct entry *begin, *stop; };
__declspec(dllexport) void __tgt_register_lib(struct desc *d) {
  printf("__tgt_register_lib images %d entries %d\n", d->n, (int)(d->stop - d->begin));
  for (struct entry *e = d->begin; e < d->stop; e++)
    printf("entry %s size %llu\n", e->name, (unsigned long long)e->size);
  for (int i = 0; i < d->n; i++)
    printf("image %d: %llu bytes\n", i, (unsigned long long)((char *)d->images[i].end - (char *)d->images[i].start));
}
__declspec(dllexport) void __tgt_unregister_lib(struct desc *d) { printf("__tgt_unregister_lib images %d\n", d->n); }
__declspec(dllexport) int __tgt_target_kernel(void *loc, int64_t dev, int32_t teams, int32_t threads, void *host, void *args) { printf("__tgt_target_kernel\n"); return 1; }
