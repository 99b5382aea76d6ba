package tape

import (
	"errors"

	"github.com/klauspost/compress/s2"
)

// Compression of records, as a drive does it between the host and the
// medium (SSC-5 4.2.21: data compression is transparent to the host; the
// logical block is what READ returns). The codec is S2 (the Snappy
// extension of klauspost/compress): it takes the role of LTO's SLDC, a fast
// LZ77 codec whose ratio depends on the data. A record that does not get
// smaller is stored as it is, as SLDC's pass-through scheme stores
// incompressible data without growth.

// Encoding says how a block is to be stored on the medium.
type Encoding struct {
	// Compress asks for the block to be compressed (DCE of the data
	// compression mode page). It is stored compressed only when that
	// makes it smaller.
	Compress bool
	// Key encrypts the block (after compression) when not nil.
	Key *Key
}

// CompressBound is the size of the buffer Compress needs for a block of n
// bytes (negative when n is too large for the codec).
func CompressBound(n int) int { return s2.MaxEncodedLen(n) }

// Compress compresses src into dst, which must have room for
// CompressBound(len(src)) bytes, and returns the compressed bytes; ok is
// false when they would not be smaller than src (the block is then stored
// as it is). It does not allocate.
func Compress(dst, src []byte) (out []byte, ok bool) {
	out = s2.Encode(dst[:cap(dst)], src)
	return out, len(out) < len(src)
}

// ErrDecompress is returned by Decompress for data that does not decode
// to the expected length.
var ErrDecompress = errors.New("tape: compressed record does not decode")

// Decompress decodes src, compressed by Compress, into dst, whose length
// must be the block's logical length. It does not allocate.
func Decompress(dst, src []byte) error {
	n, err := s2.DecodedLen(src)
	if err != nil || n != len(dst) {
		return ErrDecompress
	}
	out, err := s2.Decode(dst, src)
	if err != nil || len(out) != len(dst) {
		return ErrDecompress
	}
	return nil
}
