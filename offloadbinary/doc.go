// Package offloadbinary reads and writes the OffloadBinary, the container
// of LLVM's offloading toolchain that carries device images (magic 10 FF 10
// AD, llvm/Object/OffloadBinary.h), as each LLVM release writes and reads
// it, and reproduces clang-offload-packager.
//
// Start with [ReadAll], which reads every binary of a section (the
// contents of .llvm.offloading), or [WriteBinary]:
//
//	bins, err := offloadbinary.ReadAll(bytes.NewReader(section), int64(len(section)), nil)
//	for _, b := range bins {
//		for _, im := range b.Images {
//			fmt.Println(im.Kind, im.OffloadKind, im.Triple(), im.Arch())
//		}
//	}
//
// What differs between releases is read from a row of the release table
// (package release). LLVM 13 and 14, the old OpenMP driver, have no
// OffloadBinary and no packager ([release.Release.BinaryVersion] 0: writing
// one for them is refused with [goffload.ErrUnsupported]).
//
// # OffloadBinary
//
// [WriteBinary] writes version 1, the only version any release 15–22 writes,
// byte for byte as LLVM does, streaming the image from an [io.Reader].
// [ParseImageArg] and [Package] reproduce clang-offload-packager,
// including the order of its string map, which each release takes from a
// different hash table. [ReadBinary] and [ReadAll] read one binary or every
// binary of a section; with [ReadOptions.Release] set they accept and reject
// exactly what that release does, and by default they read every version
// the table knows, each binary as the release that made it
// ([Binary.Releases] says which).
//
// Row 23 (Inferred) writes version 2: several images in one binary, as 23's
// llvm-offload-binary does ([WriteBinaries]). Row 24 of the table is LLVM's
// main branch after the 23 branch (Inferred): it writes version 3 (a 40-byte
// header), and [WriteCompressedBinary] and [WriteCompressedBinaries]
// compress the body with zstd or zlib ([Compression]), streamed. Version 3
// is read by default and by 24 only,
// its compressed bodies inflated as far as they are read (listing a binary
// inflates the start of its stream, reading an image streams it), in memory
// only, never to a temporary file. [FlagMetadata] marks an entry of strings
// and no image.
//
// # Example
//
//	r, _ := release.Lookup(19)
//	img := offloadbinary.Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP,
//		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "x86_64-unknown-linux-gnu"}, {Key: "arch", Value: ""}}}
//	bin, err := offloadbinary.MarshalBinary(r, &img, deviceELF)
//
// # Security
//
// The readers are meant for untrusted input. Every size and offset read from a
// binary is checked before it is used, nothing is allocated from a declared
// length beyond the size of the input, and bad input gives an error (a
// [*goffload.FormatError] saying which field at which byte, matching [goffload.ErrInvalid],
// [goffload.ErrTruncated] or [ErrUnchecked]), never a panic. Where LLVM reads out of
// bounds (string entries and strings are not checked by LLVM), this package
// refuses the binary with [ErrUnchecked]; an image that lies outside its binary
// is accepted, as LLVM does, and [Binary.Open] reports [ErrImageRange]. The
// reader is fuzzed (FuzzReadAll).
//
// What the reads of one command decode is bounded by one [Budget]
// ([ReadOptions.Budget]), linear in the input's size (each compressed
// binary's InflatedSize counted as input): images listed, nested ones
// included, at most one per 40 bytes plus 4096; the bytes of images and
// strings, counted each time an entry points to them, at most 16 times the
// input plus 1 MiB (a string is decoded once, however many entries point to
// it); bytes inflated at most 16 GiB in all, held in memory at most 64 MiB
// in all and 4 MiB a binary ([Budget.MaxInflated],
// [Budget.MaxInflatedMemory] raise them). Beyond a bound the read fails
// with an error matching [goffload.ErrLimit]. LLVM main does not refuse
// images that overlap or share bytes; neither does this package, but it
// counts them each time. Reading a compressed binary inflates the first 64
// KiB of its stream (more where its entries and strings lie further), and
// reading an image in order, in reads of 64 KiB or more, decodes it
// straight into the caller's buffer. A compressed stream is checked as far as it is
// inflated: a stream that ends early or runs on past InflatedSize is an
// error when the read reaches its end.
package offloadbinary
