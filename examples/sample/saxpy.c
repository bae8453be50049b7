/* A device function for the sample image: what the device half of an OpenMP
   `target` region compiled for the host-device target looks like, kept tiny.
   saxpy-x86_64.o is `cc -O2 -c -fno-asynchronous-unwind-tables saxpy.c`. */
void saxpy(int n, float a, const float *x, float *y) {
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}
