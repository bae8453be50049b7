// Compiled at test time by g++ and clang++ with -g: COMDAT groups (inline
// functions and templates), .eh_frame, debug info, a constructor.
#include <cstdio>
#include <string>

template <typename T> T twice(T x) { return x + x; }
inline int inline_counter() { static int n; return ++n; }

struct Greeter {
  std::string who;
  Greeter() : who("constructor") { std::printf("%s ran\n", who.c_str()); }
};
static Greeter greeter;

int lib_value(int x) {
  inline_counter();
  return twice(x) + twice<long>(x) + inline_counter();
}
