package tape

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
)

// Encryption of records, as a drive does it with application-managed
// encryption (SSC-5 4.2.24, tape data encryption): the host sets a key
// with SECURITY PROTOCOL OUT, the drive encrypts each block with
// AES-256-GCM (the algorithm LTO drives report, security algorithm code
// 00010014h) after compressing it, and keeps the key in memory only. A
// block stores its nonce, its key-associated data and the GCM tag beside
// the ciphertext; the key itself is never stored.

// KeySize is the AES-256 key length; NonceSize and TagSize are GCM's.
const (
	KeySize   = 32
	NonceSize = 12
	TagSize   = 16
	// MaxKAD bounds each key-associated data descriptor (authenticated
	// and unauthenticated) a block carries, as LTO drives report them:
	// 32 bytes of U-KAD, 12 of A-KAD.
	MaxUKAD = 32
	MaxAKAD = 12
)

// A Key is a data encryption key as the host set it, with the
// key-associated data that goes with every block written under it. It
// does not give the key's bytes back: nothing can store or print them.
type Key struct {
	aead cipher.AEAD
	// AKAD and UKAD are the authenticated and unauthenticated
	// key-associated data the host gave with the key (each at most
	// MaxAKAD, MaxUKAD bytes).
	AKAD, UKAD []byte
}

// NewKey returns a key for AES-256-GCM; key must be KeySize bytes. The
// KAD slices are copied.
func NewKey(key, akad, ukad []byte) (*Key, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("tape: key of %d bytes, want %d (AES-256)", len(key), KeySize)
	}
	if len(akad) > MaxAKAD || len(ukad) > MaxUKAD {
		return nil, fmt.Errorf("tape: key-associated data of %d and %d bytes, at most %d and %d", len(akad), len(ukad), MaxAKAD, MaxUKAD)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(b)
	if err != nil {
		return nil, err
	}
	return &Key{aead: aead, AKAD: append([]byte(nil), akad...), UKAD: append([]byte(nil), ukad...)}, nil
}

// String does not show the key.
func (k *Key) String() string {
	return fmt.Sprintf("AES-256-GCM key (A-KAD %d bytes, U-KAD %d bytes)", len(k.AKAD), len(k.UKAD))
}

// Seal appends the encryption of plain and its tag to dst (which needs
// room for len(plain)+TagSize bytes not to allocate); aad is
// authenticated with it.
func (k *Key) Seal(dst, nonce, plain, aad []byte) []byte {
	return k.aead.Seal(dst, nonce, plain, aad)
}

// ErrDecrypt is returned by Open when the key is not the one the block
// was written with, or the block or its authenticated data changed.
var ErrDecrypt = errors.New("tape: block does not decrypt with this key")

// Open appends the decryption of sealed (ciphertext and tag) to dst.
func (k *Key) Open(dst, nonce, sealed, aad []byte) ([]byte, error) {
	out, err := k.aead.Open(dst, nonce, sealed, aad)
	if err != nil {
		return nil, ErrDecrypt
	}
	return out, nil
}
