int g(int);
int main(void){int s=0;
#pragma omp target map(from:s)
s=g(2);
return s!=4;}
