int coeffs[6] = {1, 2, 3, 4, 5, 6};
double bias = 0.5;
#pragma omp declare target link(coeffs, bias)
