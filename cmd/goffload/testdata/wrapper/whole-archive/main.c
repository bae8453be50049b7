#include <string.h>
#include "../offload.h"
#include "plugins.h"
extern const struct plugin __start_wa_plugins[], __stop_wa_plugins[];
int main(void) {
  /* The plugins are in the order of the link: print them by name. */
  const char *order[] = {"blue", "green", "red"};
  printf("%d plugins\n", (int)(__stop_wa_plugins - __start_wa_plugins));
  for (int k = 0; k < 3; k++)
    for (const struct plugin *p = __start_wa_plugins; p < __stop_wa_plugins; p++)
      if (strcmp(p->name, order[k]) == 0) {
        int dev = 0, v = p->run(&dev);
        printf("%s = %d, on device %d\n", p->name, v, dev);
      }
  return 0;
}
