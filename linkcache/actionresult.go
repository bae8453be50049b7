package linkcache

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// The part of Bazel's remote-execution protocol that an entry on a server
// is (build.bazel.remote.execution.v2, remote_execution.proto): an
// ActionResult (field 2: output_files) of OutputFiles (1: path, 2: digest,
// 4: is_executable), each Digest (1: hash, the SHA-256 in lowercase
// hexadecimal; 2: size_bytes). The outputs of a step are the files "0",
// "1", ... in order, as in a local entry. Protocol buffers' wire format:
// each field a varint key (field number << 3 | wire type) then its value;
// wire type 0 a varint, 2 a varint length and that many bytes, 1 and 5
// eight and four bytes.

// maxActionResult bounds the ActionResult read from a server: a step has
// at most maxFiles outputs, each some 100 bytes.
const maxActionResult = 1 << 20

// appendField appends a length-delimited field.
func appendField(b []byte, field int, data []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// marshalActionResult returns the ActionResult of a step's outputs.
func marshalActionResult(files []fileSum) []byte {
	var ar []byte
	for i, f := range files {
		var digest []byte
		digest = appendField(digest, 1, []byte(hex.EncodeToString(f.sum[:])))
		digest = binary.AppendUvarint(digest, 2<<3) // field 2, a varint
		digest = binary.AppendUvarint(digest, uint64(f.size))
		var of []byte
		of = appendField(of, 1, []byte(strconv.Itoa(i)))
		of = appendField(of, 2, digest)
		ar = appendField(ar, 2, of)
	}
	return ar
}

var errProto = errors.New("not an ActionResult of this cache")

// protoFields calls f for each field of a message, with the bytes of a
// length-delimited one (nil for the others) and the value of a varint.
func protoFields(b []byte, f func(field int, data []byte, v uint64) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 || key>>3 == 0 || key>>3 > 1<<29 {
			return errProto
		}
		b = b[n:]
		field, wire := int(key>>3), key&7
		switch wire {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return errProto
			}
			b = b[n:]
			if err := f(field, nil, v); err != nil {
				return err
			}
		case 1, 5:
			size := 8
			if wire == 5 {
				size = 4
			}
			if len(b) < size {
				return errProto
			}
			b = b[size:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errProto
			}
			data := b[n : n+int(l)]
			b = b[n+int(l):]
			if err := f(field, data, 0); err != nil {
				return err
			}
		default:
			return errProto
		}
	}
	return nil
}

// unmarshalActionResult reads an ActionResult that names the outputs "0",
// "1", ... in order; other fields (stdout, exit code, metadata) are
// skipped.
func unmarshalActionResult(b []byte) ([]fileSum, error) {
	var files []fileSum
	err := protoFields(b, func(field int, data []byte, _ uint64) error {
		if field != 2 || data == nil {
			return nil
		}
		var path string
		var fsum fileSum
		var hasDigest bool
		err := protoFields(data, func(field int, data []byte, _ uint64) error {
			switch {
			case field == 1 && data != nil:
				path = string(data)
			case field == 2 && data != nil:
				hasDigest = true
				return protoFields(data, func(field int, data []byte, v uint64) error {
					switch {
					case field == 1 && data != nil:
						if len(data) != 64 || !lowerHex(string(data)) {
							return fmt.Errorf("%w: digest %q", errProto, data)
						}
						hex.Decode(fsum.sum[:], data)
					case field == 2 && data == nil:
						if v > 1<<62 {
							return fmt.Errorf("%w: size %d", errProto, v)
						}
						fsum.size = int64(v)
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !hasDigest || path != strconv.Itoa(len(files)) {
			return fmt.Errorf("%w: output %q where %d is next", errProto, path, len(files))
		}
		if len(files) == maxFiles {
			return fmt.Errorf("%w: more than %d outputs", errProto, maxFiles)
		}
		files = append(files, fsum)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no outputs", errProto)
	}
	return files, nil
}
