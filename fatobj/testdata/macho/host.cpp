// A macOS host's C++ file for the embedding test: code, data, constants,
// zero-fill and common data, a static constructor, a jump table, a
// thread-local variable, exceptions (an LSDA, the personality) and, with
// -g, DWARF: what makes the sections after __LLVM,__offloading move.
extern "C" int printf(const char *, ...);
int counter = 3;
static int table[100];
static const char greeting[] = "hello from the host";
struct S { S(); ~S(); int v; };
S s;
thread_local int tls = 5;
extern int external(int);
static int twice(int y) { return y * 2; }
int sw(int x) {
  switch (x) { case 0: return external(1); case 1: return external(7); case 2: return external(3) + 1;
  case 3: return external(9); case 4: return 42; case 5: return external(11); default: return tls; }
}
int thrower(int x) { if (x) throw x; return table[x & 63]; }
int catcher(int x) { try { return thrower(x) + twice(x); } catch (int e) { return e + greeting[e & 7]; } }
int main() { printf("%d\n", catcher(counter) + sw(counter)); return 0; }
