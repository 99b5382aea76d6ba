package tape

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

func testKey(t testing.TB, b byte, akad, ukad string) *Key {
	t.Helper()
	k, err := NewKey(bytes.Repeat([]byte{b}, KeySize), []byte(akad), []byte(ukad))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCodecRoundTrip: every encoding decodes to the block; the prefix
// carries the logical length and the KAD; compression applies before
// encryption, so compressible data stays small encrypted.
func TestCodecRoundTrip(t *testing.T) {
	random := make([]byte, 64<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(random)
	zeros := make([]byte, 64<<10)
	key := testKey(t, 7, "AKAD", "volume TAPE01")
	for _, tc := range []struct {
		name  string
		data  []byte
		enc   Encoding
		flags uint8
		max   int // stored bytes at most
	}{
		{"zeros compressed", zeros, Encoding{Compress: true}, EncCompressed, 4 << 10},
		{"random compressed", random, Encoding{Compress: true}, 0, 0},
		{"zeros encrypted", zeros, Encoding{Key: key}, EncEncrypted, len(zeros) + MaxEncodingOverhead},
		{"zeros compressed and encrypted", zeros, Encoding{Compress: true, Key: key}, EncCompressed | EncEncrypted, 4 << 10},
		{"random compressed and encrypted", random, Encoding{Compress: true, Key: key}, EncEncrypted, len(random) + MaxEncodingOverhead},
		{"one byte encrypted", []byte{42}, Encoding{Compress: true, Key: key}, EncEncrypted, 1 + MaxEncodingOverhead},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Codec
			rec, flags := c.Encode(8, tc.data, tc.enc)
			if flags != tc.flags {
				t.Fatalf("flags %#x, want %#x", flags, tc.flags)
			}
			if flags == 0 {
				if rec != nil {
					t.Fatal("stored as written, but a record returned")
				}
				return
			}
			data := bytes.Clone(rec[8:])
			if len(data) > tc.max {
				t.Errorf("%d bytes stored for %d, want at most %d", len(data), len(tc.data), tc.max)
			}
			if LogicalLen(data) != len(tc.data) {
				t.Errorf("logical length %d, want %d", LogicalLen(data), len(tc.data))
			}
			if flags&EncEncrypted != 0 {
				akad, ukad := BlockKAD(data, flags)
				if string(akad) != "AKAD" || string(ukad) != "volume TAPE01" {
					t.Errorf("KAD %q %q", akad, ukad)
				}
				if bytes.Contains(data, tc.data[:min(len(tc.data), 64)]) && len(tc.data) >= 64 && flags&EncCompressed == 0 {
					t.Error("the plaintext is in the stored data")
				}
			}
			var d Codec
			got, err := d.Decode(bytes.Clone(data), flags, key)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("decode: %v, %d bytes, equal %v", err, len(got), bytes.Equal(got, tc.data))
			}
			if flags&EncEncrypted == 0 {
				return
			}
			if _, err := d.Decode(bytes.Clone(data), flags, nil); !errors.Is(err, ErrNoKey) {
				t.Errorf("no key: %v, want ErrNoKey", err)
			}
			if _, err := d.Decode(bytes.Clone(data), flags, testKey(t, 8, "AKAD", "")); !errors.Is(err, ErrWrongKey) {
				t.Errorf("another key: %v, want ErrWrongKey", err)
			}
			// The A-KAD and the logical length are authenticated.
			tampered := bytes.Clone(data)
			tampered[cryptPrefix]++
			if _, err := d.Decode(tampered, flags, key); !errors.Is(err, ErrWrongKey) {
				t.Errorf("A-KAD changed: %v, want ErrWrongKey", err)
			}
		})
	}
}

// TestCodecNonceFresh: two encryptions of the same block differ.
func TestCodecNonceFresh(t *testing.T) {
	var c Codec
	key := testKey(t, 1, "", "")
	block := bytes.Repeat([]byte("same"), 100)
	a, _ := c.Encode(0, block, Encoding{Key: key})
	a = bytes.Clone(a)
	b, _ := c.Encode(0, block, Encoding{Key: key})
	if bytes.Equal(a, b) || bytes.Equal(a[8:cryptPrefix], b[8:cryptPrefix]) {
		t.Error("the same block encrypted twice gives the same bytes (nonce reused)")
	}
}

func TestCodecZeroAllocs(t *testing.T) {
	var c Codec
	key := testKey(t, 3, "A", "U")
	block := make([]byte, 256<<10)
	for i := range block {
		block[i] = byte(i / 64)
	}
	enc := Encoding{Compress: true, Key: key}
	rec, flags := c.Encode(64, block, enc)
	data := bytes.Clone(rec[64:])
	scratch := make([]byte, len(data))
	if _, err := c.Decode(append(scratch[:0], data...), flags, key); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { c.Encode(64, block, enc) }); n != 0 {
		t.Errorf("Encode: %v allocs", n)
	}
	if n := testing.AllocsPerRun(50, func() {
		if _, err := c.Decode(append(scratch[:0], data...), flags, key); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Decode: %v allocs", n)
	}
}

func TestNewKeyRefuses(t *testing.T) {
	if _, err := NewKey(make([]byte, 16), nil, nil); err == nil {
		t.Error("a 16-byte key accepted for AES-256")
	}
	if _, err := NewKey(make([]byte, KeySize), make([]byte, MaxAKAD+1), nil); err == nil {
		t.Error("an A-KAD longer than the drive takes accepted")
	}
	k := testKey(t, 0x5a, "x", "y")
	if s := k.String(); bytes.Contains([]byte(s), []byte("5a5a")) || bytes.Contains([]byte(s), []byte{0x5a, 0x5a}) {
		t.Errorf("String shows the key: %s", s)
	}
}
