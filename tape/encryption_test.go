package tape

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The pages below are the bytes the clients send (stenc 2.x make_sde,
// stenc 1.0.7 as Debian builds it, LTFS sg_set_key), with key k.

func spinCDB(proto byte, page uint16, alloc uint32) []byte {
	c := []byte{0xa2, proto, byte(page >> 8), byte(page), 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(c[6:], alloc)
	return c
}

func spoutCDB(n int) []byte {
	c := []byte{0xb5, 0x20, 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(c[6:], uint32(n))
	return c
}

// sdePage is a Set Data Encryption page: b4, b5, modes, algorithm index,
// the key (KEY LENGTH = len(key)) and KAD descriptors.
func sdePage(b4, b5, enc, dec, alg byte, key []byte, kads ...[]byte) []byte {
	p := []byte{0x00, 0x10, 0, 0, b4, b5, enc, dec, alg, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	p = binary.BigEndian.AppendUint16(p, uint16(len(key)))
	p = append(p, key...)
	for _, k := range kads {
		p = append(p, k...)
	}
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)-4))
	return p
}

func kad(typ, b1 byte, v string) []byte {
	return append([]byte{typ, b1, byte(len(v) >> 8), byte(len(v))}, v...)
}

var (
	keyA = bytes.Repeat([]byte{0xa5}, 32)
	keyB = bytes.Repeat([]byte{0x5b}, 32)
)

// status reads the data encryption status page: modes, key instance
// counter, byte 12, and the KAD bytes after the header.
func status(t *testing.T, h *harness) (enc, dec byte, instance uint32, b12 byte, kads []byte) {
	t.Helper()
	p := h.ok(spinCDB(0x20, 0x0020, 8192), nil, 8192)
	if binary.BigEndian.Uint16(p) != 0x0020 || int(binary.BigEndian.Uint16(p[2:]))+4 != len(p) || len(p) < 24 {
		t.Fatalf("status page % x", p)
	}
	return p[5], p[6], binary.BigEndian.Uint32(p[8:]), p[12], p[24:]
}

func TestSecurityProtocolInPages(t *testing.T) {
	h := newHarness(t, "personality=lto8")
	wantBytes(t, "protocols", h.ok(spinCDB(0x00, 0x0000, 8192), nil, 8192), hexBytes("0000 0000 0000 0002 00 20"))
	wantBytes(t, "in support", h.ok(spinCDB(0x20, 0x0000, 8192), nil, 8192),
		hexBytes("0000 000e 0000 0001 0010 0011 0012 0020 0021"))
	wantBytes(t, "out support", h.ok(spinCDB(0x20, 0x0001, 8192), nil, 8192), hexBytes("0001 0002 0010"))
	// LTFS asks for the header first.
	wantBytes(t, "header only", h.ok(spinCDB(0x20, 0x0010, 4), nil, 4), hexBytes("0010 0028"))
	caps := h.ok(spinCDB(0x20, 0x0010, 8192), nil, 8192)
	if len(caps) != 44 {
		t.Fatalf("capabilities: %d bytes % x", len(caps), caps)
	}
	d := caps[20:]
	// Index 1, length 14h; ENCRYPT_C and DECRYPT_C 10b (stenc 2.x needs
	// both); AVFMV with a writable cartridge; U-KAD 32, A-KAD 12, key 32;
	// key descriptors allowed, no raw decryption; AES-256-GCM.
	if d[0] != 1 || binary.BigEndian.Uint16(d[2:]) != 0x14 || d[4]&0x0f != 0x0a || d[4]&0x80 == 0 ||
		binary.BigEndian.Uint16(d[6:]) != 32 || binary.BigEndian.Uint16(d[8:]) != 12 || binary.BigEndian.Uint16(d[10:]) != 32 ||
		d[12]>>6 != 3 || d[12]>>1&7 != 1 || binary.BigEndian.Uint32(d[20:]) != 0x00010014 {
		t.Errorf("algorithm descriptor % x", d)
	}
	wantBytes(t, "key formats", h.ok(spinCDB(0x20, 0x0011, 8192), nil, 8192), hexBytes("0011 0001 00"))
	wantBytes(t, "management caps", h.ok(spinCDB(0x20, 0x0012, 8192), nil, 8192), hexBytes("0012 000c 00 04 00 07 0000000000000000"))
	enc, dec, inst, b12, kads := status(t, h)
	if enc != 0 || dec != 0 || inst != 0 || b12 != 0x10 || len(kads) != 0 {
		t.Errorf("power-on status: modes %d/%d, instance %d, byte 12 %#x, KAD % x", enc, dec, inst, b12, kads)
	}
	for _, tc := range []struct {
		cdb  []byte
		want string
	}{
		{spinCDB(0x21, 0, 100), "700005000000000a000000002400 00 c0 0001"}, // unknown protocol
		{spinCDB(0x20, 0x0030, 100), "700005000000000a000000002400 00 c0 0002"},
		{spinCDB(0x00, 0x0002, 100), "700005000000000a000000002400 00 c0 0002"},
	} {
		if s, _ := h.fail(tc.cdb, nil, 100); s != string(bytes.ReplaceAll([]byte(tc.want), []byte(" "), nil)) {
			t.Errorf("% x: sense %s, want %s", tc.cdb, s, tc.want)
		}
	}
	// A DAT72 has no SECURITY PROTOCOL commands.
	h = newHarness(t, "personality=dat72")
	if s, _ := h.fail(spinCDB(0x00, 0x0000, 100), nil, 100); s != "700005000000000a00000000200000000000" {
		t.Errorf("dat72 SPIN: sense %s, want 20/00", s)
	}
}

// TestEncryptionRoundTrip: stenc's pages turn encryption on and off; what
// is written encrypted reads back with the key and fails with the
// documented sense without it, with another key, or after a reset; the
// next block page tells.
func TestEncryptionRoundTrip(t *testing.T) {
	h := newHarness(t, "personality=lto6")
	// stenc 2.x: stenc -e on -d on -k F -a 1, the key file's second line
	// "Hello world!" as U-KAD.
	on := sdePage(0x40, 0x40, 2, 2, 1, keyA, kad(0x00, 0x00, "Hello world!"))
	h.ok(spoutCDB(len(on)), on, 0)
	enc, dec, inst, _, kads := status(t, h)
	if enc != 2 || dec != 2 || inst != 1 || !bytes.Equal(kads, kad(0x00, 0x01, "Hello world!")) {
		t.Fatalf("after set: modes %d/%d, instance %d, KAD % x", enc, dec, inst, kads)
	}
	blocks := [][]byte{bytes.Repeat([]byte("secret tar record "), 1000), bytes.Repeat([]byte{7}, 4096)}
	for _, b := range blocks {
		h.ok(write6(false, len(b)), b, 0)
	}
	h.ok(cdb(0x10, 0, 0, 0, 1, 0), nil, 0) // WRITE FILEMARKS 1
	// A plain block after it, written with encryption off.
	off107 := sdePage(0x40, 0x00, 0, 0, 0, make([]byte, 32)) // stenc 1.0.7 -e off: index 0, zero key
	h.ok(spoutCDB(len(off107)), off107, 0)
	plain := []byte("plain block")
	h.ok(write6(false, len(plain)), plain, 0)
	if _, _, _, b12, _ := status(t, h); b12&0x08 == 0 {
		t.Error("VCELB clear with encrypted blocks on the cartridge")
	}

	rewind := cdb(0x01, 0, 0, 0, 0, 0)
	h.ok(rewind, nil, 0)
	// Decryption off: DATA PROTECT 74/01, the block stays the next one.
	if s, _ := h.fail(read6(false, false, 64<<10), nil, 64<<10); s != "700007000000000a00000000740100000000" {
		t.Errorf("read without a key: sense %s, want 07/74/01", s)
	}
	h.wantPos(0, 0, 0)
	nbes := func() []byte { return h.ok(spinCDB(0x20, 0x0021, 8192), nil, 8192) }
	if p := nbes(); p[12]&0x0f != 6 || p[13] != 1 || !bytes.Contains(p[16:], []byte("Hello world!")) {
		t.Errorf("next block without the key: % x", p)
	}
	// Another key: 74/03.
	other := sdePage(0x40, 0x40, 0, 3, 1, keyB)
	h.ok(spoutCDB(len(other)), other, 0)
	if s, _ := h.fail(read6(false, false, 64<<10), nil, 64<<10); s != "700007000000000a00000000740300000000" {
		t.Errorf("read with another key: sense %s, want 07/74/03", s)
	}
	h.wantPos(0, 0, 0)
	// LTFS's page: ENCRYPT + MIXED, A-KAD of 12 bytes; the right key.
	ltfs := sdePage(0x40, 0x00, 2, 3, 1, keyA, kad(0x01, 0x00, "ABC123456789"))
	h.ok(spoutCDB(len(ltfs)), ltfs, 0)
	if _, _, inst, _, _ := status(t, h); inst != 4 {
		t.Errorf("key instance counter %d after four sets, want 4", inst)
	}
	if p := nbes(); p[12] != 0x45 || !bytes.Contains(p[16:], []byte("Hello world!")) {
		t.Errorf("next block with the key: status %#x (want compressed 4, decryptable 5) % x", p[12], p)
	}
	for i, b := range blocks {
		if got := h.ok(read6(false, false, len(b)), nil, len(b)); !bytes.Equal(got, b) {
			t.Fatalf("block %d reads back different", i)
		}
	}
	var sum uint64
	for _, b := range blocks {
		sum += uint64(len(b))
	}
	if st := h.d.Stats(); st.EncryptedBytes != sum || st.DecryptedBytes != sum {
		t.Errorf("stats: %d bytes encrypted, %d decrypted, want %d each", st.EncryptedBytes, st.DecryptedBytes, sum)
	}
	if p := nbes(); p[12]&0x0f != 2 {
		t.Errorf("next block at a filemark: status %d, want 2", p[12]&0x0f)
	}
	h.do(read6(false, false, 100), nil, 100) // the filemark
	// MIXED reads the plain block.
	if got := h.ok(read6(false, false, len(plain)), nil, len(plain)); !bytes.Equal(got, plain) {
		t.Errorf("plain block in MIXED: %q", got)
	}
	if p := nbes(); p[12]&0x0f != 1 {
		t.Errorf("next block at end of data: status %d, want 1", p[12]&0x0f)
	}
	// DECRYPT refuses the plain block: 74/02.
	decrypt := sdePage(0x40, 0x00, 0, 2, 1, keyA)
	h.ok(spoutCDB(len(decrypt)), decrypt, 0)
	h.ok(rewind, nil, 0)
	h.ok(cdb(0x11, 0x01, 0, 0, 1, 0), nil, 0) // SPACE 1 filemark
	if s, _ := h.fail(read6(false, false, 100), nil, 100); s != "700007000000000a00000000740200000000" {
		t.Errorf("plain block while decrypting: sense %s, want 07/74/02", s)
	}
	// A LUN reset clears the key.
	h.d.Reset()
	h.clearUA()
	if enc, dec, _, _, kads := status(t, h); enc != 0 || dec != 0 || len(kads) != 0 {
		t.Errorf("after reset: modes %d/%d, KAD % x", enc, dec, kads)
	}
}

// TestSetDataEncryptionRefused: what the drive does not take is ILLEGAL
// REQUEST 26/00 at the field, and changes nothing.
func TestSetDataEncryptionRefused(t *testing.T) {
	h := newHarness(t, "personality=lto7")
	for _, tc := range []struct {
		name string
		page []byte
		sks  string // sense-key specific bytes: the field pointer into the page
	}{
		{"raw decryption", sdePage(0x40, 0, 2, 1, 1, keyA), "800007"},
		{"external encryption", sdePage(0x40, 0, 1, 2, 1, keyA), "800006"},
		{"algorithm 0 (stenc 1.x without -a)", sdePage(0x40, 0, 2, 2, 0, keyA), "800008"},
		{"a 16-byte key", sdePage(0x40, 0, 2, 2, 1, keyA[:16]), "800012"},
		{"no key", sdePage(0x40, 0, 2, 2, 1, nil), "800012"},
		{"LOCK", sdePage(0x41, 0, 2, 2, 1, keyA), "880004"},
		{"scope 3", sdePage(0x60, 0, 2, 2, 1, keyA), "8f0004"},
		{"CKORL", sdePage(0x40, 0x01, 2, 2, 1, keyA), "890005"},
		{"A-KAD of 13 bytes", sdePage(0x40, 0, 2, 2, 1, keyA, kad(0x01, 0, "0123456789abc")), "800036"},
		{"U-KAD of 33 bytes", sdePage(0x40, 0, 2, 2, 1, keyA, kad(0x00, 0, string(bytes.Repeat([]byte("u"), 33)))), "800036"},
		{"nonce descriptor", sdePage(0x40, 0, 2, 2, 1, keyA, kad(0x02, 0, "n")), "800034"},
	} {
		if s, _ := h.fail(spoutCDB(len(tc.page)), tc.page, 0); s != "700005000000000a00000000260000"+tc.sks {
			t.Errorf("%s: sense %s, want 05/26/00 with SKS %s", tc.name, s, tc.sks)
		}
	}
	if enc, dec, inst, _, _ := status(t, h); enc != 0 || dec != 0 || inst != 0 {
		t.Errorf("after refused pages: modes %d/%d, instance %d", enc, dec, inst)
	}
	// stenc 1.0.7 leaves the KAD header's reserved bits uninitialised:
	// accepted, as the descriptor is otherwise fine.
	p := sdePage(0x40, 0, 2, 2, 1, keyA, kad(0x00, 0xf8, "TAPE01"))
	h.ok(spoutCDB(len(p)), p, 0)
	if _, _, _, _, kads := status(t, h); !bytes.Equal(kads, kad(0x00, 0x01, "TAPE01")) {
		t.Errorf("KAD % x", kads)
	}
}

// TestClearKeyOnDemount: with CKOD the key goes with the cartridge; without
// it the key stays for the next one.
func TestClearKeyOnDemount(t *testing.T) {
	h := newHarness(t, "personality=lto9")
	p := sdePage(0x40, 0x04, 2, 2, 1, keyA)
	h.ok(spoutCDB(len(p)), p, 0)
	if err := h.d.Unload(); err != nil {
		t.Fatal(err)
	}
	if enc, dec, _, _, _ := status(t, h); enc != 0 || dec != 0 {
		t.Errorf("after an unload with CKOD: modes %d/%d, want 0/0", enc, dec)
	}
	if err := h.d.Load("T00001"); err != nil {
		t.Fatal(err)
	}
	h.clearUA()
	p = sdePage(0x40, 0x00, 2, 2, 1, keyA)
	h.ok(spoutCDB(len(p)), p, 0)
	if err := h.d.Unload(); err != nil {
		t.Fatal(err)
	}
	if enc, dec, _, _, _ := status(t, h); enc != 2 || dec != 2 {
		t.Errorf("after an unload without CKOD: modes %d/%d, want 2/2", enc, dec)
	}
}
