struct vec {
  int len;
  double *data;
};
#pragma omp declare mapper(struct vec v) map(v, v.data[0:v.len])
void vec_scale(struct vec *v, double by, int *on_device);
