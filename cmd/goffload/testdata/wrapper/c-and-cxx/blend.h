#ifdef __cplusplus
extern "C" {
#endif
#pragma omp begin declare target
int mix(int a, int b); /* C++, extern "C" */
#pragma omp end declare target
int blend(const int *a, const int *b, int *out, int n); /* C */
#ifdef __cplusplus
}
#endif
