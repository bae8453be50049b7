#include <string.h>
#include "registry.h"
static const char *names[8];
static AreaFn fns[8];
static int count;
Registrar::Registrar(const char *name, AreaFn fn) {
  // Kept sorted by name: constructors run in an order of the link's.
  int i = count++;
  for (; i > 0 && strcmp(names[i - 1], name) > 0; i--) {
    names[i] = names[i - 1];
    fns[i] = fns[i - 1];
  }
  names[i] = name;
  fns[i] = fn;
}
int registry_size() { return count; }
const char *registry_name(int i) { return names[i]; }
AreaFn registry_fn(int i) { return fns[i]; }
