#include "../offload.h"
#include "registry.h"
int main() {
  printf("%d shapes\n", registry_size());
  for (int i = 0; i < registry_size(); i++) {
    int dev = 0;
    double a = registry_fn(i)(2, &dev);
    printf("%s of 2: %.3f, on device %d\n", registry_name(i), a, dev);
  }
  return 0;
}
