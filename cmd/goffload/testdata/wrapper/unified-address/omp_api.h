/* The few OpenMP routines the program calls (omp.h is not installed for
   every release). */
#include <stddef.h>
void *omp_target_alloc(size_t size, int device);
void omp_target_free(void *ptr, int device);
int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset,
                      size_t src_offset, int dst_device, int src_device);
int omp_get_default_device(void);
int omp_get_initial_device(void);
