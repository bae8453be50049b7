package release_test

import (
	"fmt"

	"github.com/goffload/goffload/release"
)

// Look a release up, and read the facts its tools lay out differently.
func ExampleLookup() {
	r, err := release.Lookup(19)
	if err != nil {
		panic(err)
	}
	fmt.Println(r, r.Entries.Size, r.Entries.OpenMP, r.Wrapper.CtorPriority, r.Link.Archives)
	// Output: LLVM 19 32 omp_offloading_entries 101 resolve
}

// Which releases of the table write 56-byte entries, and are measured.
func ExampleWhere() {
	v1 := release.Where(func(r *release.Release) bool { return r.Entries.Size == 56 })
	measured := release.Where(func(r *release.Release) bool { return !r.Inferred })
	fmt.Println(v1)
	fmt.Println(v1 & measured)
	// Output:
	// LLVM 21-24
	// LLVM 21-22
}

// Walk the rows of a range of releases.
func ExampleRange() {
	for _, r := range release.Range(18, 21) {
		fmt.Println(r.Major, r.Kinds.HIP, r.Entries.Requires)
	}
	// Output:
	// 18 3 ctor
	// 19 3 entry-reserved
	// 20 3 entry-reserved
	// 21 4 entry-data
}
