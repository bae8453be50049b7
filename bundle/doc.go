// Package bundle reads and writes clang offload bundles, the files that
// clang-offload-bundler makes: the HIP fatbin that clang-linker-wrapper embeds
// in .hip_fatbin (docs/bundles.md#hip-fatbin), and the bundles of the old
// offloading driver. It writes the bundles of LLVM 17 to 24 and reads those of
// 13 to 24 (bundle files and bundled objects), checked against
// clang-offload-bundler 14, 19 and 22.
//
// # Uncompressed bundles
//
// An uncompressed bundle is, all integers little-endian:
//
//	"__CLANG_OFFLOAD_BUNDLE__"  uint64 count
//	count × { uint64 offset, uint64 size, uint64 ID length, ID }
//	the entries' data, each at its offset
//
// [Write] lays the data out as the bundler does: in the order of -targets
// (the bundler sorts nothing, the host entry goes where -targets puts it),
// each entry at the next multiple of -bundle-align after the end of the
// previous one or of the header, zero bytes in between and none after the
// last. An empty host entry (HIP's /dev/null) still gets an offset, so a HIP
// fatbin is the header, zeros up to 4096, and the device code objects. Write
// streams each input once and its output is byte for byte the bundler's;
// [NewReader] presents the same bytes as an [*io.SectionReader] that reads the
// inputs (io.ReaderAts) only as it is read, for embedding without a copy.
// [Read] parses the header in place; [Bundle.Open] returns an entry's data
// as an [*io.SectionReader] of the input.
//
// IDs are "<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]". From LLVM 17
// (measured on 19 and 22) the bundler rewrites each -targets entry into that form before writing it
// ("host-x86_64-unknown-linux" becomes "host-x86_64-unknown-linux--"), and
// the bundler of LLVM 22 refuses three-field triples. A release's row gives
// ([release.Bundle], [HIPReleases]),
// the IDs that clang-linker-wrapper's bundler call writes: a "hipv4" device
// kind up to 18 and "hip" from 19, and the host
// "host-x86_64-unknown-linux--" up to 19 and
// "host-x86_64-unknown-linux-gnu-" from 20 (measured on 19 and 22; 17, 18,
// 20 and 21 are inferred). [WriteHIPFatbin] writes the wrapper's
// fatbin.
//
// # Compressed bundles
//
// With -compress the bundler compresses the whole bundle and prefixes a
// header, "CCOB" then uint16 version and uint16 method (0 zlib, 1 zstd),
// followed by
//
//	version 1:  uint32 uncompressed size,                    uint64 hash  (LLVM 18, inferred)
//	version 2:  uint32 file size, uint32 uncompressed size,  uint64 hash  (19.1.7; 20, 21 inferred)
//	version 3:  uint64 file size, uint64 uncompressed size,  uint64 hash  (22; COMPRESSED_BUNDLE_FORMAT_VERSION=2 selects 2)
//
// where the hash is the first 8 bytes of the MD5 of the uncompressed bundle,
// read little-endian; no LLVM checks it ([Hash] computes it). The bundlers
// here are built with zstd and always use it, at level 3 unless
// -compression-level or OFFLOAD_BUNDLER_COMPRESSION_LEVEL says otherwise;
// zlib bundles are read as well (LLVM reads both). [Read] refuses a
// compressed bundle with [ErrCompressed]. [ReadCompressed] reads its header
// and [Compressed.Open] streams the uncompressed bundle, with
// github.com/klauspost/compress/zstd or compress/zlib. [Compressed.Entries]
// reads the entries of the bundle inside from its header alone, and
// [Compressed.OpenEntry] streams one entry's data, so that nothing is ever
// decompressed whole:
//
//	f, _ := os.Open("kernels.hipfb")
//	st, _ := f.Stat()
//	c, err := bundle.ReadCompressed(f, st.Size())
//	entries, err := c.Entries()
//	for _, e := range entries {
//		r := c.OpenEntry(e) // decompresses up to the entry's end
//		...
//	}
//
// [WriteCompressed] writes a compressed bundle as clang-offload-bundler
// -compress does, given [CompressOptions]: the version (1, 2 or 3), the
// method and the level (the bundler's -compression-level; zstd takes any
// level, as libzstd clamps it, zlib 1 to 9). The header's fields are the
// bundler's for the same input, but for the file size: the zstd frame comes
// from github.com/klauspost/compress/zstd (content size in the frame header,
// no checksum, as libzstd writes it; no long-distance matching, so large
// inputs with distant repeats compress less well) and zlib from
// compress/zlib, so the stream is not libzstd's or libz's bytes, and the
// bundlers of 19 and 22 unbundle it to the same entries. It reads its input
// once and keeps memory bounded whatever the size: the header, which holds
// the stream's size and hash, is written last, in place, when the writer is
// a file, else the stream goes through a temporary file first. Versions 1
// and 2 refuse bundles over 4 GiB ([SizeLimitError]), as LLVM does.
// [WriteCompressedHIPFatbin] writes the fatbin that
// clang-linker-wrapper --compress has the bundler write, with
// [CompressDefaults].
//
// # Bundled objects and device archives
//
// The old offloading driver (OpenMP up to LLVM 14, HIP -fgpu-rdc through
// 22) puts a bundle's entries in the sections of an object instead:
// [SectionPrefix] + the entry's ID, the host's entry one zero byte.
// [ObjectEntries] lists them with what they hold ([Classify]). A release's
// bundler reads IDs by its own rule: up to 19
// the last '-' part is a target ID when it names an offload arch, from 20 an
// ID has five or six parts; [ParseID] reads an entry's ID, [ParseTarget] a
// requested target as the bundler standardizes it, and [Compatible] decides
// as clang's isCodeObjectCompatible does (kinds, triples compared as
// llvm::Triple compares them, processors, xnack and sramecc features).
// [NewDeviceArchive] takes what -unbundle -type=a takes of a static library
// of such objects (fatobj.DeviceArchive feeds it a library's members): the
// compatible code objects, named as the bundler names
// them ([DeviceMemberName]), and [DeviceArchive.Write] writes the archive
// byte for byte as the bundler of 19 and 22 does, its symbol index made of
// the members' ELF symbols or of their bitcode's IR symbol table.
//
// # What is read
//
// [Read] accepts exactly the headers from which clang-offload-bundler 19 and
// 22 extract every entry (checked by mutating bundles and comparing), with
// two refusals where LLVM goes wrong: an entry whose offset plus size wraps
// past 2^64 (LLVM copies from before its buffer) and a header that LLVM
// reads only in part (it then crashes, or takes the file for a host object).
// For compressed bundles it accepts what LLVM 22 accepts: versions 1 to 3,
// fewer bytes than the declared uncompressed size but not more, the stream
// running to the end of the input whatever the file size field says, zlib
// data followed by other bytes, zstd frames (skippable ones too) with
// nothing after them, and a zstd checksum that matches. The zstd library
// decodes every frame as zstd 1.5.4 does; on damaged data without a
// checksum, libzstd 1.5 (which LLVM links) still decodes some streams that
// the library calls corrupt (a Huffman stream not used up exactly, a
// sequence stream read past its start) into garbage that LLVM unbundles;
// this package refuses them. Frames whose window exceeds
// [Compressed.MaxWindow] are refused too; LLVM decompresses in one shot into
// a buffer of the declared size and has no such limit.
//
// # Security
//
// The readers are meant for untrusted input. Every offset, size, count and
// ID length is checked against the input's size before it is used, and
// nothing is allocated from a declared length: IDs grow with the bytes
// actually read, entries are never copied, and the declared uncompressed
// size only bounds the output. Decompression memory is bounded by the zstd
// frame's window (at most [Compressed.MaxWindow], default 128 MiB, allocated
// when the frame's first block is decoded) plus at most 1 MiB, or zlib's
// 32 KiB window; no goroutine is started. A small compressed input may
// still decompress to much output (up to the declared uncompressed size,
// 4 GiB in version 2, which the caller may check before reading); Entries
// decompresses only what the header takes, and that header at most
// [DefaultMaxHeaderSize] (1 MiB, [Compressed.MaxHeaderSize] raises it) with
// IDs of at most [MaxCompressedIDLength] (4 KiB) bytes, else
// [goffload.ErrLimit] before the entries or the ID are read. Bad input gives an error, a [*goffload.FormatError]
// saying what is wrong at which byte and matching [ErrNotBundle],
// [ErrCompressed], [goffload.ErrInvalid], [goffload.ErrTruncated], [goffload.ErrUnsupported],
// or [goffload.ErrLimit], never a panic (compressed data that does not
// decompress is [goffload.ErrInvalid]). Read, the compressed
// readers, bundle IDs, bundled objects and device archives are fuzzed
// (FuzzRead, FuzzZstd, FuzzParseID, FuzzObjectEntries, FuzzDeviceArchive).
package bundle
