int x;
#pragma omp declare target to(x)
int main(void){ int r=0;
#pragma omp target map(from:r)
 { r = 1 + x; }
 return r; }
