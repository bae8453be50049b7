package offloadbinary

import "testing"

func TestParseImageSection(t *testing.T) {
	for _, c := range []struct {
		name, triple, arch, stem string
		ok                       bool
	}{
		{".llvm.offloading.x86_64-pc-linux-gnu..vadd", "x86_64-pc-linux-gnu", "", "vadd", true},
		{".llvm.offloading.nvptx64-nvidia-cuda.sm_70.k.cu", "nvptx64-nvidia-cuda", "sm_70", "k.cu", true},
		{".llvm.offloading", "", "", "", false},
		{".llvm.offloading.relocatable", "", "", "", false},
		{".llvm.offloading.x86_64", "", "", "", false},
		{".llvm.offloading..gfx90a.k", "", "", "", false},
	} {
		triple, arch, stem, ok := ParseImageSection(c.name)
		if ok != c.ok || triple != c.triple || arch != c.arch || stem != c.stem {
			t.Errorf("%q: %q %q %q %v", c.name, triple, arch, stem, ok)
		}
	}
}
