#pragma omp begin declare target
int factor = 3;
int scaled(int x) { return factor * x; }
#pragma omp end declare target
