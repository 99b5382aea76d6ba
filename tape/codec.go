package tape

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"math/rand/v2"
)

// Encoded blocks. A medium stores a block as written, or encoded: its
// data then starts with a prefix and the medium keeps the encoding flags
// beside it (the cartridge image in its record header). The prefix and
// the flags are this file's; the media only store them.
//
//	offset  size  field
//	0       4     logical length, little-endian (the block as the host reads it)
//	4       1     A-KAD length a (encrypted only; the prefix ends at 4 otherwise)
//	5       1     U-KAD length u
//	6       2     reserved, 0
//	8       12    GCM nonce
//	20      a     authenticated key-associated data
//	20+a    u     unauthenticated key-associated data
//	...           the body: the S2-compressed block (EncCompressed) or the
//	              block, encrypted with AES-256-GCM and followed by the tag
//	              when EncEncrypted; the GCM additional data is the prefix
//	              up to the end of the A-KAD.
const (
	// EncCompressed: the body is an S2 block (Compress).
	EncCompressed uint8 = 1 << 0
	// EncEncrypted: the body is AES-256-GCM ciphertext and tag.
	EncEncrypted uint8 = 1 << 1
	// EncKnown are the flags this program reads.
	EncKnown = EncCompressed | EncEncrypted

	// PrefixSize is the prefix of a block that is only compressed;
	// cryptPrefix the fixed part of an encrypted block's.
	PrefixSize  = 4
	cryptPrefix = 20
	// MaxEncodingOverhead is the most an encoded block's data exceeds its
	// logical length: the encrypted prefix with the largest KAD and the
	// tag (the body is never longer than the block).
	MaxEncodingOverhead = cryptPrefix + MaxAKAD + MaxUKAD + TagSize
	// MaxPrefixSize is the longest prefix (BlockKAD needs no more).
	MaxPrefixSize = cryptPrefix + MaxAKAD + MaxUKAD
)

// Errors Decode returns for data that is not what Encode made.
var errBadPrefix = errors.New("tape: encoded block prefix does not match its data")

// A Codec encodes and decodes blocks for a medium, in buffers it keeps:
// once they have grown to the largest block, it does not allocate. It is
// not safe for concurrent use (a medium has one).
type Codec struct {
	enc []byte // Encode's output
	dec []byte // Decode's output
	rng *rand.ChaCha8
}

// Encode encodes plain as enc asks and returns the data to store after
// room for head bytes at its start (rec[head:] is the data; the caller
// fills rec[:head], a record header), with the encoding flags. flags is 0
// and rec nil when the block is to be stored as written: nothing asked
// for, or compression alone that would not make it smaller.
func (c *Codec) Encode(head int, plain []byte, enc Encoding) (rec []byte, flags uint8) {
	n := len(plain)
	var a, u int
	pre := PrefixSize
	if enc.Key != nil {
		a, u = len(enc.Key.AKAD), len(enc.Key.UKAD)
		pre = cryptPrefix + a + u
	}
	body := head + pre
	c.enc = grow(c.enc, body+max(CompressBound(n), n)+TagSize)
	payload := plain
	if enc.Compress {
		// Worth it when the block shrinks, and, without encryption, by
		// more than the prefix costs.
		if out, ok := Compress(c.enc[body:], plain); ok && (enc.Key != nil || len(out)+PrefixSize < n) {
			payload, flags = out, EncCompressed
		}
	}
	if enc.Key == nil {
		if flags == 0 {
			return nil, 0
		}
		rec = c.enc[:body+len(payload)]
		binary.LittleEndian.PutUint32(rec[head:], uint32(n))
		return rec, flags
	}
	flags |= EncEncrypted
	p := c.enc[head:body]
	binary.LittleEndian.PutUint32(p, uint32(n))
	p[4], p[5], p[6], p[7] = byte(a), byte(u), 0, 0
	c.nonce(p[8:cryptPrefix])
	copy(p[cryptPrefix:], enc.Key.AKAD)
	copy(p[cryptPrefix+a:], enc.Key.UKAD)
	// Seal in place when the payload is the compressed body there.
	sealed := enc.Key.Seal(c.enc[body:body], p[8:cryptPrefix], payload, p[:cryptPrefix+a])
	return c.enc[:body+len(sealed)], flags
}

// nonce fills b with a fresh random nonce (a ChaCha8 stream seeded from
// the OS: 96 random bits per block).
func (c *Codec) nonce(b []byte) {
	if c.rng == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // crypto/rand.Read does not fail (Go 1.24+)
		c.rng = rand.NewChaCha8(seed)
	}
	_, _ = c.rng.Read(b) // ChaCha8.Read never fails
}

// LogicalLen returns the logical length an encoded block's data starts
// with (0 when data is shorter than the prefix).
func LogicalLen(data []byte) int {
	if len(data) < PrefixSize {
		return 0
	}
	return int(binary.LittleEndian.Uint32(data))
}

// BlockKAD returns the key-associated data stored with an encrypted
// block's data (nil slices for another block).
func BlockKAD(data []byte, flags uint8) (akad, ukad []byte) {
	if flags&EncEncrypted == 0 || len(data) < cryptPrefix {
		return nil, nil
	}
	a, u := int(data[4]), int(data[5])
	if len(data) < cryptPrefix+a+u {
		return nil, nil
	}
	return data[cryptPrefix : cryptPrefix+a], data[cryptPrefix+a : cryptPrefix+a+u]
}

// Decode decodes an encoded block's data (as Encode made it, with its
// flags) into a buffer of the codec and returns the block. An encrypted
// block needs key: without one it fails with ErrNoKey, with another
// one (or altered data) with ErrWrongKey. data is used as scratch.
func (c *Codec) Decode(data []byte, flags uint8, key *Key) ([]byte, error) {
	n := LogicalLen(data)
	if n <= 0 || flags&^EncKnown != 0 {
		return nil, errBadPrefix
	}
	body := data[PrefixSize:]
	if flags&EncEncrypted != 0 {
		if len(data) < cryptPrefix {
			return nil, errBadPrefix
		}
		a, u := int(data[4]), int(data[5])
		if len(data) < cryptPrefix+a+u+TagSize {
			return nil, errBadPrefix
		}
		if key == nil {
			return nil, ErrNoKey
		}
		sealed := data[cryptPrefix+a+u:]
		plain, err := key.Open(sealed[:0], data[8:cryptPrefix], sealed, data[:cryptPrefix+a])
		if err != nil {
			return nil, ErrWrongKey
		}
		body = plain
	}
	c.dec = grow(c.dec, n)
	out := c.dec[:n]
	if flags&EncCompressed != 0 {
		if err := Decompress(out, body); err != nil {
			return nil, err
		}
		return out, nil
	}
	if len(body) != n {
		return nil, errBadPrefix
	}
	copy(out, body)
	return out, nil
}

// grow returns b with room for n bytes: b itself when it has, else a new
// buffer (the old contents are not kept).
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:cap(b)]
	}
	return make([]byte, n)
}
