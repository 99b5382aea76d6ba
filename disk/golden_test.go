package disk_test

import (
	"testing"
)

// The three geometries every golden test covers.
const (
	cfg512n = "size=1G"                          // 2097152 x 512
	cfg4Kn  = "size=1G;lbs=4096"                 // 262144 x 4096
	cfg512e = "size=1G;pbexp=3;lowest_aligned=1" // 512-byte logical, 4096-byte physical, LBA 1 aligned
)

func TestInquiryStandard(t *testing.T) {
	for _, cfg := range []string{cfg512n, cfg4Kn, cfg512e} {
		td := newDisk(t, cfg)
		// PDT 0, RMB 0, VERSION 6 (SPC-4), HISUP + format 2, ADDITIONAL
		// LENGTH 69, CMDQUE; "VSCSI", "VDISK", "0100"; version
		// descriptors SAM-5, SPC-4, SBC-4, SBC-3.
		td.golden(inquiry(false, 0, 96), 96, `00 00 06 12 45 00 00 02
			5653435349202020 56444953 4b202020 2020202020202020 30313030
			00*22 00a0 0460 0600 04c0 00*8`)
		// Allocation length truncation (sd asks for 36 first).
		r, got := td.in(inquiry(false, 0, 36), 255)
		good(t, r)
		if len(got) != 36 {
			t.Fatalf("INQUIRY alloc 36 wrote %d bytes", len(got))
		}
	}
}

func TestInquiryOverrides(t *testing.T) {
	td := newDisk(t, cfg512n+";vendor=ACME;product=Fast Disk 9000;rev=A1;serial=SN-0042;naa=5000c50012345678")
	r, got := td.in(inquiry(false, 0, 36), 36)
	good(t, r)
	if s := string(got[8:36]); s != "ACME    Fast Disk 9000  A1  " {
		t.Fatalf("INQUIRY strings %q", s)
	}
	td.golden(inquiry(true, 0x80, 255), 255, "00 80 00 07 "+hexOf("SN-0042"))
	td.golden(inquiry(true, 0x83, 255), 255, `00 83 00 1f 01 03 00 08 5000c50012345678
		02 01 00 0f 4143 4d45 2020 2020 `+hexOf("SN-0042"))
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}

// The serial number and the NAA designator are derived from the device
// name, so they must never change between releases: these bytes are the
// contract with every /dev/disk/by-id link and multipath config out there.
func TestInquiryIdentityDerivedFromName(t *testing.T) {
	td := newDisk(t, cfg512n)
	td.golden(inquiry(true, 0x80, 255), 255, "00 80 00 05 "+hexOf("disk0"))
	td.golden(inquiry(true, 0x83, 255), 255, `00 83 00 1d
		01 03 00 08 50a5c519c8e8afdc
		02 01 00 0d 5653435349202020 `+hexOf("disk0"))
}

func TestInquiryVPDSupportedPages(t *testing.T) {
	newDisk(t, cfg512n).golden(inquiry(true, 0, 255), 255, "00 00 00 05 00 80 83 b0 b1")
	newDisk(t, cfg512n+";lbpws=1").golden(inquiry(true, 0, 255), 255, "00 00 00 06 00 80 83 b0 b1 b2")
}

func TestInquiryVPDBlockLimits(t *testing.T) {
	tests := []struct{ name, cfg, want string }{
		// WSNZ; MAXIMUM COMPARE AND WRITE LENGTH 255 (at most
		// MAXIMUM TRANSFER LENGTH, below); OPTIMAL TRANSFER LENGTH GRANULARITY 1; MAXIMUM TRANSFER
		// LENGTH not reported; OPTIMAL TRANSFER LENGTH 1024; no unmap;
		// MAXIMUM WRITE SAME LENGTH 65535.
		{"512n", cfg512n, "00 b0 00 3c 01 ff 0001 00000000 00000400 00000000 00000000 00000000 00000000 00000000 000000000000ffff 00*20"},
		{"4Kn", cfg4Kn, "00 b0 00 3c 01 ff 0001 00000000 00000400 00000000 00000000 00000000 00000000 00000000 000000000000ffff 00*20"},
		// Granularity 8 (the physical block); with UNMAP: MAXIMUM UNMAP
		// LBA COUNT ffffffff, 256 descriptors, OPTIMAL UNMAP GRANULARITY 8,
		// UGAVALID with alignment 1 (the lowest aligned LBA).
		{"512e", cfg512e + ";lbpu=1", "00 b0 00 3c 01 ff 0008 00000000 00000400 00000000 ffffffff 00000100 00000008 80000001 000000000000ffff 00*20"},
		{"limits", cfg4Kn + ";max_blks=256;opt_blks=64;opt_gran=2;lbpws=1;unmap_gran=16;max_ws_blks=0",
			"00 b0 00 3c 01 ff 0002 00000100 00000040 00000000 00000000 00000000 00000010 80000000 0000000000000000 00*20"},
		{"caw-at-max", cfg512n + ";max_blks=8;opt_blks=8",
			"00 b0 00 3c 01 08 0001 00000008 00000008 00000000 00000000 00000000 00000000 00000000 000000000000ffff 00*20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			newDisk(t, tt.cfg).golden(inquiry(true, 0xb0, 255), 255, tt.want)
		})
	}
}

func TestInquiryVPDBlockCharacteristics(t *testing.T) {
	// The default: non-rotating (sd sets QUEUE_FLAG_NONROT), no form factor.
	newDisk(t, cfg512n).golden(inquiry(true, 0xb1, 255), 255, "00 b1 00 3c 0001 00 00 00*56")
	// Not reported: rotation 0 (rotational to sd).
	newDisk(t, cfg512n+";rotation=0").golden(inquiry(true, 0xb1, 255), 255, "00 b1 00 3c 0000 00 00 00*56")
	// Non-rotating, 2.5 inch.
	newDisk(t, cfg4Kn+";rotation=1;form_factor=2.5").golden(inquiry(true, 0xb1, 255), 255, "00 b1 00 3c 0001 00 03 00*56")
	newDisk(t, cfg512e+";rotation=7200;form_factor=3.5").golden(inquiry(true, 0xb1, 255), 255, "00 b1 00 3c 1c20 00 02 00*56")
}

func TestInquiryVPDProvisioning(t *testing.T) {
	// LBPU, LBPWS, LBPRZ 001b; thin provisioned.
	newDisk(t, cfg512n+";lbpu=1;lbpws=1").golden(inquiry(true, 0xb2, 255), 255, "00 b2 00 04 00 c4 02 00")
	newDisk(t, cfg4Kn+";lbpws10=1;lbprz=0").golden(inquiry(true, 0xb2, 255), 255, "00 b2 00 04 00 20 02 00")
	// Without provisioning there is no B2 page.
	r, _ := newDisk(t, cfg512e).in(inquiry(true, 0xb2, 255), 255)
	wantField(t, r, true, 2, -1)
}

func TestReadCapacity(t *testing.T) {
	tests := []struct{ name, cfg, rc10, rc16 string }{
		{"512n", cfg512n, "001fffff 00000200", "00000000001fffff 00000200 10 00 0000 00*16"},
		{"4Kn", cfg4Kn, "0003ffff 00001000", "000000000003ffff 00001000 10 00 0000 00*16"},
		// LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT 3, LOWEST ALIGNED LBA 1.
		{"512e", cfg512e, "001fffff 00000200", "00000000001fffff 00000200 10 03 0001 00*16"},
		// LBPME + LBPRZ.
		{"thin", cfg512n + ";lbpu=1", "001fffff 00000200", "00000000001fffff 00000200 10 00 c000 00*16"},
		{"thin-nolbprz", cfg512n + ";lbpws=1;lbprz=0", "001fffff 00000200", "00000000001fffff 00000200 10 00 8000 00*16"},
		// 2^33 blocks: READ CAPACITY(10) says "use (16)".
		{"4T", "size=4T", "ffffffff 00000200", "00000001ffffffff 00000200 10 00 0000 00*16"},
		// Exactly 2^32 blocks: the last LBA ffffffff is reported as the
		// FFFFFFFFh escape too, which is what SBC-4 wants.
		{"2T", "size=2T", "ffffffff 00000200", "00000000ffffffff 00000200 10 00 0000 00*16"},
		// Just under: 2^32-1 blocks → last LBA fffffffe fits.
		{"2T-1", "blocks=4294967295", "fffffffe 00000200", "00000000fffffffe 00000200 10 00 0000 00*16"},
		// Odd size (a disk sold as 1 GB): 1,000,000,000 bytes = 1953125 blocks.
		{"odd", "size=1000000000", "001dcd64 00000200", "00000000001dcd64 00000200 10 00 0000 00*16"},
		{"odd4k", "size=1000000000;lbs=4096;pbexp=1;lowest_aligned=1", "0003b9ab 00001000", "000000000003b9ab 00001000 10 01 0001 00*16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := newDisk(t, tt.cfg)
			td.golden(readCapacity10(), 8, tt.rc10)
			td.golden(readCapacity16(32), 32, tt.rc16)
			// sd asks READ CAPACITY(16) for 32 bytes into a 32-byte buffer;
			// a short allocation length truncates.
			td.golden(readCapacity16(12), 64, tt.rc16[:len("00000000001fffff 00000200")])
			td.golden(readCapacity16(0), 64, "")
		})
	}
}

func TestReadCapacityErrors(t *testing.T) {
	td := newDisk(t, cfg512n)
	// SERVICE ACTION IN(16) with a service action the disk does not serve
	// (READ LONG(16)).
	c := readCapacity16(32)
	c[1] = 0x11
	r, _ := td.in(c, 32)
	wantField(t, r, true, 1, 4)
}

func TestModeSense(t *testing.T) {
	const pages = `01 0a c0 00 00 00 00 00 00 00 00 00
		08 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
		0a 0a 02 00 00 00 00 00 00 00 00 00`
	tests := []struct{ name, cfg, ms6, ms10long string }{
		// MODE DATA LENGTH 55, medium type 0, DPOFUA, one 8-byte block
		// descriptor: 2097152 blocks of 512.
		{"512n", cfg512n, "37 00 10 08 00200000 00000200 " + pages,
			"0042 00 10 01 00 0010 0000000000200000 00000000 00000200 " + pages},
		{"4Kn", cfg4Kn, "37 00 10 08 00040000 00001000 " + pages,
			"0042 00 10 01 00 0010 0000000000040000 00000000 00001000 " + pages},
		{"512e", cfg512e, "37 00 10 08 00200000 00000200 " + pages,
			"0042 00 10 01 00 0010 0000000000200000 00000000 00000200 " + pages},
		// WP in the device-specific byte; WCE and D_SENSE defaults from
		// the config; a capacity that does not fit the short descriptor.
		{"wp-wce-dsense-8T", "size=8T;wp=1;wce=1;dsense=1",
			"37 00 90 08 ffffffff 00000200 01 0a c0 00 00 00 00 00 00 00 00 00 08 12 04 00*17 0a 0a 06 00*9",
			"0042 00 90 01 00 0010 0000000400000000 00000000 00000200 01 0a c0 00 00 00 00 00 00 00 00 00 08 12 04 00*17 0a 0a 06 00*9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := newDisk(t, tt.cfg)
			// sd's first MODE SENSE: page 3Fh, all pages.
			td.golden([]byte{0x1a, 0, 0x3f, 0, 0xff, 0}, 255, tt.ms6)
			// MODE SENSE(10) with LLBAA: the 16-byte descriptor.
			td.golden([]byte{0x5a, 0x10, 0x3f, 0, 0, 0, 0, 0x01, 0x00, 0}, 512, tt.ms10long)
		})
	}
}

func TestModeSensePageControl(t *testing.T) {
	td := newDisk(t, cfg512n+";wce=1")
	// Changeable values: only WCE in the caching page, only D_SENSE in the
	// control page; nothing in the error recovery page. DBD=1.
	td.golden([]byte{0x1a, 0x08, 0x48, 0, 0xff, 0}, 255, "17 00 10 00 08 12 04 00*17")
	td.golden([]byte{0x1a, 0x08, 0x4a, 0, 0xff, 0}, 255, "0f 00 10 00 0a 0a 04 00*9")
	td.golden([]byte{0x1a, 0x08, 0x41, 0, 0xff, 0}, 255, "0f 00 10 00 01 0a 00*10")
	// Default values follow the config.
	td.golden([]byte{0x1a, 0x08, 0x88, 0, 0xff, 0}, 255, "17 00 10 00 08 12 04 00*17")
	// Saved values are not supported (39/00).
	r, _ := td.in([]byte{0x1a, 0x08, 0xc8, 0, 0xff, 0}, 255)
	wantSense(t, r, 0x05, 0x3900)
	// An unsupported page (04h, rigid disk geometry).
	r, _ = td.in([]byte{0x1a, 0x08, 0x04, 0, 0xff, 0}, 255)
	wantField(t, r, true, 2, 5)
}

func TestModeSelectCaching(t *testing.T) {
	td := newDisk(t, cfg512n)
	if td.d.Stats().WriteCache {
		t.Fatal("WCE set by default")
	}
	// sd's "echo 'write back' > cache_type": MODE SELECT(6) PF=1, header
	// with no block descriptor, caching page with WCE=1.
	sel := hx("00 00 00 00 08 12 04 00*17")
	good(t, td.out([]byte{0x15, 0x10, 0, 0, byte(len(sel)), 0}, sel))
	td.golden([]byte{0x1a, 0x08, 0x08, 0, 0xff, 0}, 255, "17 00 10 00 08 12 04 00*17")
	if !td.d.Stats().WriteCache {
		t.Fatal("Stats().WriteCache false after MODE SELECT WCE=1")
	}
	// RCD (byte 2 bit 0) is not changeable: 26/00 pointing at parameter
	// list byte 4+2 bit 0, and WCE stays as it was.
	sel = hx("00 00 00 00 08 12 01 00*17")
	wantField(t, td.out([]byte{0x15, 0x10, 0, 0, byte(len(sel)), 0}, sel), false, 6, 0)
	if !td.d.Stats().WriteCache {
		t.Fatal("a refused MODE SELECT changed WCE")
	}
	// MODE SELECT(10) with the long block descriptor of the current
	// geometry and WCE=0.
	sel = hx("0000 00 00 01 00 0010 0000000000200000 00000000 00000200 08 12 00 00*17")
	good(t, td.out([]byte{0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(sel)), 0}, sel))
	if td.d.Stats().WriteCache {
		t.Fatal("WCE still set after MODE SELECT(10) WCE=0")
	}
	// A block descriptor that changes the block length: refused, pointer
	// at the LOGICAL BLOCK LENGTH field (list byte 8+12).
	sel = hx("0000 00 00 01 00 0010 0000000000200000 00000000 00001000")
	wantField(t, td.out([]byte{0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(sel)), 0}, sel), false, 20, -1)
	// Short descriptor with NUMBER OF LOGICAL BLOCKS 0 (keep) is accepted.
	sel = hx("00 00 00 08 00000000 00000200")
	good(t, td.out([]byte{0x15, 0x10, 0, 0, byte(len(sel)), 0}, sel))
	// ...and with another capacity refused at list byte 4.
	sel = hx("00 00 00 08 00001000 00000200")
	wantField(t, td.out([]byte{0x15, 0x10, 0, 0, byte(len(sel)), 0}, sel), false, 4, -1)
}

func TestModeSelectControlSwitchesSenseFormat(t *testing.T) {
	td := newDisk(t, cfg512n)
	bad := read10(0, 1)
	bad[1] = 0x20 // RDPROTECT=1
	r := td.do(bad, nil)
	if got := r.Sense.Append(nil); got[0] != 0x70 {
		t.Fatalf("default sense response code %#x, want 0x70", got[0])
	}
	sel := hx("00 00 00 00 0a 0a 06 00*9") // GLTSD + D_SENSE
	good(t, td.out([]byte{0x15, 0x10, 0, 0, byte(len(sel)), 0}, sel))
	r = td.do(bad, nil)
	// Descriptor format, with the sense-key-specific descriptor: C/D,
	// BPV, bit 7 of byte 1.
	if got, want := r.Sense.Append(nil), hx("72 05 24 00 00 00 00 08 02 06 00 00 cf 0001 00"); string(got) != string(want) {
		t.Fatalf("descriptor sense\n got % x\nwant % x", got, want)
	}
	td.golden([]byte{0x1a, 0x08, 0x0a, 0, 0xff, 0}, 255, "0f 00 10 00 0a 0a 06 00*9")
}

func TestReportSupportedOpCodes(t *testing.T) {
	td := newDisk(t, cfg512n)
	rsoc := func(opts, op byte, sa uint16) []byte {
		return []byte{0xa3, 0x0c, opts, op, byte(sa >> 8), byte(sa), 0, 0, 0x02, 0, 0, 0}
	}
	// What sd sends at attach: is INQUIRY supported (a probe for RSOC)?
	td.golden(rsoc(1, 0x12, 0), 512, "00 03 0006 12 01 ff ff ff 04")
	// sd then asks about WRITE SAME(16) and (10) to pick ws16/ws10.
	td.golden(rsoc(1, 0x93, 0), 512, "00 03 0010 93 f9 ffffffffffffffff ffffffff 00 04")
	td.golden(rsoc(1, 0x41, 0), 512, "00 03 000a 41 f8 ffffffff 00 ffff 04")
	td.golden(rsoc(1, 0x28, 0), 512, "00 03 000a 28 f8 ffffffff 00 ffff 04")
	// READ CAPACITY(16) by service action.
	td.golden(rsoc(2, 0x9e, 0x10), 512, "00 03 0010 9e 10 00*8 ffffffff 00 04")
	// UNMAP is not supported without lbpu.
	td.golden(rsoc(1, 0x42, 0), 512, "00 01 0000")
	newDisk(t, cfg512n+";lbpu=1").golden(rsoc(1, 0x42, 0), 512, "00 03 000a 42 01 00 00 00 00 00 ffff 04")
	// The all-commands list has one 8-byte descriptor per supported
	// command, in opcode order.
	r, got := td.in(rsoc(0, 0, 0), 512)
	good(t, r)
	if n := int(got[0])<<24 | int(got[1])<<16 | int(got[2])<<8 | int(got[3]); n != len(got)-4 || n%8 != 0 {
		t.Fatalf("COMMAND DATA LENGTH %d for %d bytes", n, len(got))
	}
	var ops []byte
	for i := 4; i < len(got); i += 8 {
		ops = append(ops, got[i])
	}
	want := hx("00 03 08 0a 12 15 16 17 1a 1b 1d 1e 25 28 2a 2e 2f 34 35 41 55 5a 5e 5f 88 89 8a 8e 8f 90 91 93 9e 9e a0 a3 a8 aa ae af")
	if string(ops) != string(want) {
		t.Fatalf("supported opcodes\n got % x\nwant % x", ops, want)
	}
}

// SEND DIAGNOSTIC is the common SPC one: the default and foreground
// self-tests pass, a background one (no self-test results log page) and
// a diagnostic page (the disk has none) are refused.
func TestSendDiagnostic(t *testing.T) {
	td := newDisk(t, "size=1M")
	good(t, td.out(hx("1d 04 00 0000 00"), nil))
	good(t, td.out(hx("1d a0 00 0000 00"), nil))
	r := td.out(hx("1d 20 00 0000 00"), nil)
	wantField(t, r, true, 1, 7)
	r = td.out(hx("1d 10 00 0008 00"), hx("80 00 0004 0160 0000"))
	wantField(t, r, false, 0, -1)
	td.golden(hx("a3 0c 01 1d 0000 00000100 00 00"), 256, "00 03 0006 1d f7 00 ffff 04")
}
