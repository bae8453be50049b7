package goffload

import "runtime/debug"

// Path is the module path.
const Path = "github.com/goffload/goffload"

// Version returns the version of the module in the running program, as the
// Go toolchain recorded it ("v1.2.3", a pseudo-version, or "(devel)" for a
// build from a checkout), or "unknown" where no build information exists.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == Path {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == Path {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
			if v == "" {
				v = "(devel)"
			}
			return v
		}
	}
	return "unknown"
}
