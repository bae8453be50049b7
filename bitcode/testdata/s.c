int defined_global = 1;
extern int undefined_global;
__attribute__((weak)) int weak_global;
int exported(int x) { return x + undefined_global; }
