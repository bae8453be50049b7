/* offload.h: what every program of testdata/wrapper includes.

   ON_DEVICE(flag), inside a target region, sets flag to 1 when the region
   runs in the device image and to 0 when it runs in the host program.
   omp_is_initial_device() cannot tell: on the x86-64 host device the image
   calls the host's libomp, which answers 1 there too. So the region compares
   the address of a declare-target function in the code that runs with its
   address in the host program, passed in as HOST_PROBE. The programs run
   with OMP_TARGET_OFFLOAD=MANDATORY and print the flag: a region that the
   runtime did not find in a registered image fails, one that ran on the host
   prints 0.

   Declare-target code sits between `begin declare target` and `end declare
   target`, which every release reads. DT is the clause of `declare target`
   for a list: `to` up to OpenMP 5.1 (clang 15 and 16 compile with
   -fopenmp-version=51), `enter` from 5.2 (clang 19 and 22 compile with
   -fopenmp-version=52 -DNEW_OPENMP). */
#ifndef WRAPPER_OFFLOAD_H
#define WRAPPER_OFFLOAD_H
#include <stdint.h>
#include <stdio.h>

#ifdef NEW_OPENMP
#define DT enter
#else
#define DT to
#endif
#define PRAGMA(x) _Pragma(#x)

#pragma omp begin declare target
static int offload_probe(void) { return 0; }
#pragma omp end declare target

#define HOST_PROBE ((uintptr_t)&offload_probe)
#define ON_DEVICE(flag, probe) ((flag) = (uintptr_t)&offload_probe != (probe))

#endif
