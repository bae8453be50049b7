/* Linked at test time into a PIE and a shared object: absolute pointers in
   data (relative and symbol relocations) and calls through the PLT. */
#include <stdio.h>
#include <stdlib.h>
static int local_value = 7;
int *local_ptr = &local_value;
int (*extern_fn)(const char *) = puts;
void *heap(void) { return malloc(16); }
int main(void) { extern_fn("dyn"); free(heap()); return *local_ptr - 7; }
