#include "ring.h"
#pragma omp begin declare target
Weights weights;
#pragma omp end declare target
