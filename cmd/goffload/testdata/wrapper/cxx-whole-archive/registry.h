typedef double (*AreaFn)(double size, int *on_device);
struct Registrar {
  Registrar(const char *name, AreaFn fn);
};
int registry_size();
const char *registry_name(int i);
AreaFn registry_fn(int i);
