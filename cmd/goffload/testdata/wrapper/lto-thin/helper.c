#pragma omp begin declare target
int square(int v) { return v * v; }
#pragma omp end declare target
