#include "tables.h"
#pragma omp begin declare target
Table squares(1);
Table triple_squares(3);
#pragma omp end declare target
