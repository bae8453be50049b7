#pragma omp declare target
int g(int x){return 2*x;}
#pragma omp end declare target
