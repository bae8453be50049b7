package offload

import "testing"

func TestEntryRole(t *testing.T) {
	for _, c := range []struct {
		e    Entry
		want EntryRole
	}{
		{Entry{Kind: OffloadOpenMP, Name: "__omp_offloading_fd00_1_main_l5"}, RoleKernel},
		{Entry{Kind: OffloadOpenMP, Name: "counter", Size: 4}, RoleGlobal},
		{Entry{Kind: OffloadOpenMP, Name: "table_decl_tgt_ref_ptr", Size: 8, Flags: uint32(OMPEntryLink)}, RoleLink},
		{Entry{Kind: OffloadOpenMP, Name: "thrice", Size: 8, Flags: uint32(OMPEntryIndirect)}, RoleIndirect},
		{Entry{Kind: OffloadOpenMP, Name: "vt", Flags: uint32(OMPEntryIndirect | OMPEntryIndirectVTable)}, RoleIndirectVTable},
		{Entry{Kind: OffloadOpenMP, Name: "", Flags: uint32(OMPEntryRequires), Data: 8}, RoleRequires},
		{Entry{Kind: OffloadOpenMP, Name: "__omp_offloading__fd00_1_x_l3_ctor", Flags: uint32(OMPEntryCtor)}, RoleCtor},
		{Entry{Kind: OffloadOpenMP, Name: "d", Flags: uint32(OMPEntryDtor)}, RoleDtor},
		{Entry{Kind: OffloadOpenMP, Name: "x", Flags: 0x40}, RoleUnknown},
		{Entry{Kind: OffloadHIP, Name: "_Z4kernPf"}, RoleKernel},
		{Entry{Kind: OffloadCUDA, Name: "v", Size: 4}, RoleGlobal},
		{Entry{Kind: OffloadCUDA, Name: "v", Size: 4, Flags: uint32(GPUGlobal | GPUExtern | GPUConstant)}, RoleGlobal},
		{Entry{Kind: OffloadHIP, Name: "m", Size: 4, Flags: uint32(GPUManaged)}, RoleManaged},
		{Entry{Kind: OffloadHIP, Name: "s", Flags: uint32(GPUSurface)}, RoleSurface},
		{Entry{Kind: OffloadHIP, Name: "t", Flags: uint32(GPUTexture | GPUNormalized)}, RoleTexture},
		{Entry{Kind: OffloadHIP, Name: "?", Flags: 5}, RoleUnknown},
	} {
		if got := c.e.Role(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.e, got, c.want)
		}
	}
}
