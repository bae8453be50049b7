#pragma omp begin declare target
int bin_of(int v, int nbins, int max) { return v * nbins / (max + 1); }
#pragma omp end declare target
