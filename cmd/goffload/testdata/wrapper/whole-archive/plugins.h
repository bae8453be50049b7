/* A plugin is a function in the section wa_plugins, which main walks. */
struct plugin {
  const char *name;
  int (*run)(int *on_device);
};
#define PLUGIN(name)                             \
  static int run_##name(int *on_device);         \
  __attribute__((used, section("wa_plugins")))   \
  static const struct plugin plugin_##name = {#name, run_##name};
