/* The start of a program for x86_64-pc-windows-msvc without Microsoft's C
   runtime: it runs the constructors of .CRT$XC* in name order, as the
   runtime does (the registration code's is in .CRT$XCA00101), then main,
   and leaves through msvcrt.dll's exit, which runs what atexit registered. */
typedef void (*ctor)(void);
#pragma section(".CRT$XCA", read)
#pragma section(".CRT$XCZ", read)
__declspec(allocate(".CRT$XCA")) const ctor xc_a = 0;
__declspec(allocate(".CRT$XCZ")) const ctor xc_z = 0;
int _fltused = 0x9875;
int main(void);
void exit(int);
void start(void) {
  for (const ctor *p = &xc_a + 1; p < &xc_z; p++)
    if (*p)
      (*p)();
  exit(main());
}
