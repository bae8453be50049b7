package fatobj

import (
	"fmt"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/internal/ferr"
)

// DeviceArchive returns the device archive of target for the static library
// f, as `clang-offload-bundler -unbundle -type=a -targets=<target>
// -allow-missing-bundles` makes it for the HIP -fgpu-rdc link: the code
// objects of every member's bundle entries (a bundled object's sections, or
// a bundle file's entries, compressed or not) compatible with target by the
// release's rules (see bundle.NewDeviceArchive). Members that hold no bundle
// are left out, and so are the members of archives nested in f, as the
// bundler reads only f's own. A thin archive, or a file that is no archive,
// is refused. Write the archive with its Write method.
func DeviceArchive(f *File, target string, opt bundle.ArchiveOptions) (*bundle.DeviceArchive, error) {
	if f.Format != FormatArchive {
		return nil, fmt.Errorf("%s: a device archive is made of a static library, not of %v: %w", f.Name, f.Format, goffload.ErrUnsupported)
	}
	d, err := bundle.NewDeviceArchive(target, opt)
	if err != nil {
		return nil, err
	}
	for _, o := range f.Objects {
		if o.depth != 1 {
			continue
		}
		switch o.Format {
		case FormatELF:
			var sections []bundle.Input
			for _, s := range o.Bundled {
				sections = append(sections, bundle.Input{ID: s.ID, Data: s.Open()})
			}
			err = d.AddObject(o.Member, sections)
		case FormatBundle:
			b, data, uerr := o.Bundles[0].Uncompressed()
			if uerr != nil {
				return nil, fmt.Errorf("%s: %w", o.Name, uerr)
			}
			err = d.AddBundle(o.Member, b, data)
		}
		if err != nil {
			return nil, &ferr.InFile{Name: f.Name, Err: err}
		}
	}
	return d, nil
}
