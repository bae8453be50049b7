/* A Windows host's C file for the embedding test: code, data, constants,
   a COMDAT variable, a static function, an exported one. */
int counter = 3;
static int table[100];
__declspec(selectany) int shared = 4;
static const char greeting[] = "hello from the host";

static int twice(int y) { return y * 2; }

__declspec(dllexport) int add(int a, int b) {
  return a + b + counter + table[a & 63] + shared + greeting[b & 7];
}

int use(int y) { return twice(y) + add(y, 1); }

/* A call out: a stack frame, so unwind information (.xdata, .pdata). */
extern int external(int);
int callout(int x) { return external(x) + external(x + 1); }
