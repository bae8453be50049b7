// A stand-in for libomptarget, for TestOpenMPRunsUnderQEMU (machines_test.go).
//
// The program is linked from this file, the registration ("wrapper") object
// that wrap.OpenMP writes and an object of offload entries that entries.Write
// writes. The wrapper's constructor calls __tgt_register_lib with its
// __tgt_bin_desc before main; __tgt_unregister_lib runs at exit (through
// atexit in the LLVM 19 module, through .fini_array in the LLVM 15 one). Both
// print what they receive; the test computes the same lines in Go.
//
// The structs are those of offload/include/Shared/APITypes.h on a 64-bit host
// with the 32-byte (legacy) __tgt_offload_entry of LLVM 15 to 20.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct __tgt_offload_entry {
	void *addr;
	char *name;
	size_t size;
	int32_t flags;
	int32_t reserved; // "data": the requires flags of a requires entry (LLVM 19)
};

struct __tgt_device_image {
	void *ImageStart;
	void *ImageEnd;
	struct __tgt_offload_entry *EntriesBegin;
	struct __tgt_offload_entry *EntriesEnd;
};

struct __tgt_bin_desc {
	int32_t NumDeviceImages;
	struct __tgt_device_image *DeviceImages;
	struct __tgt_offload_entry *HostEntriesBegin;
	struct __tgt_offload_entry *HostEntriesEnd;
};

// The symbols that the test's entries point at. The region ID of a target
// region is defined by entries.Write in the entries object (".<name>.region_id",
// not a C identifier, hence the asm label).
int goffload_var[4] = {1, 2, 3, 4};
void *goffload_var_decl_tgt_ref_ptr = 0;
extern const char goffload_region_id __asm__(".__omp_offloading_fe00_1_goffload_kernel_l7.region_id");

static const struct {
	const void *addr;
	const char *name;
} known[] = {
	{goffload_var, "goffload_var"},
	{&goffload_var_decl_tgt_ref_ptr, "goffload_var_decl_tgt_ref_ptr"},
	{&goffload_region_id, "region_id"},
};

static const char *addrName(const void *p) {
	if (p == NULL)
		return "null";
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (known[i].addr == p)
			return known[i].name;
	return "unknown";
}

// fnv1a is the 64-bit FNV-1a hash (Go's hash/fnv New64a).
static uint64_t fnv1a(const unsigned char *p, size_t n) {
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h;
}

static void printEntries(const char *what, struct __tgt_offload_entry *b, struct __tgt_offload_entry *e) {
	if (e < b) {
		printf("%s: end %p before begin %p\n", what, (void *)e, (void *)b);
		return;
	}
	printf("%s: %ld entries\n", what, (long)(e - b));
	for (struct __tgt_offload_entry *p = b; p < e; p++)
		printf("  name=\"%s\" addr=%s size=%lu flags=0x%x data=%d\n", p->name ? p->name : "(null)", addrName(p->addr),
		       (unsigned long)p->size, (unsigned)p->flags, (int)p->reserved);
}

static struct __tgt_bin_desc *registered;

void __tgt_register_lib(struct __tgt_bin_desc *desc) {
	registered = desc;
	printf("register: %d images\n", (int)desc->NumDeviceImages);
	for (int i = 0; i < desc->NumDeviceImages; i++) {
		struct __tgt_device_image *im = &desc->DeviceImages[i];
		const unsigned char *s = im->ImageStart, *e = im->ImageEnd;
		if (e < s) {
			printf("image %d: end before start\n", i);
			continue;
		}
		size_t n = (size_t)(e - s);
		printf("image %d: %lu bytes fnv1a=%016llx head=", i, (unsigned long)n, (unsigned long long)fnv1a(s, n));
		for (size_t j = 0; j < 4 && j < n; j++)
			printf("%02x", s[j]);
		printf(" aligned8=%s\n", ((uintptr_t)s % 8) == 0 ? "yes" : "no");
		char what[32];
		snprintf(what, sizeof what, "image %d entries", i);
		printEntries(what, im->EntriesBegin, im->EntriesEnd);
	}
	printEntries("host entries", desc->HostEntriesBegin, desc->HostEntriesEnd);
	fflush(stdout);
}

void __tgt_unregister_lib(struct __tgt_bin_desc *desc) {
	printf("unregister: %d images, %s descriptor\n", (int)desc->NumDeviceImages, desc == registered ? "same" : "another");
	fflush(stdout);
}

int main(void) {
	printf("main\n");
	fflush(stdout);
	return 0;
}
