// The C side of the link tests (link_test.go): the object that elfobj
// writes defines goffload_msg, a pointer that an absolute relocation
// initializes, and a constructor in .init_array that prints its own line
// through puts before main runs.
#include <stdio.h>

extern const char *goffload_msg;

int main(void) {
	puts(goffload_msg);
	return 0;
}
