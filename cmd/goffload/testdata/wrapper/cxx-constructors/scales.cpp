#include "tables.h"
#pragma omp begin declare target
Scale half(0.5);
#pragma omp end declare target
