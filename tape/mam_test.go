package tape

import (
	"encoding/binary"
	"testing"
)

func readAttrCDB(sa byte, part byte, first uint16) []byte {
	c := make([]byte, 16)
	c[0], c[1], c[7] = 0x8c, sa, part
	binary.BigEndian.PutUint16(c[8:], first)
	binary.BigEndian.PutUint32(c[10:], 65536)
	return c
}

func writeAttrCDB(part byte, n int) []byte {
	c := make([]byte, 16)
	c[0], c[1], c[7] = 0x8d, 0x01, part
	binary.BigEndian.PutUint32(c[10:], uint32(n))
	return c
}

// attrList builds a WRITE ATTRIBUTE parameter list.
func attrList(attrs ...[]byte) []byte {
	var body []byte
	for _, a := range attrs {
		body = append(body, a...)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

func attr(id uint16, format byte, val []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = append(b, format)
	b = binary.BigEndian.AppendUint16(b, uint16(len(val)))
	return append(b, val...)
}

// parseAttrs returns the attributes of an ATTRIBUTE VALUES response.
func parseAttrs(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	n := int(binary.BigEndian.Uint32(b))
	if n != len(b)-4 {
		t.Fatalf("AVAILABLE DATA %d, %d bytes follow", n, len(b)-4)
	}
	m := map[uint16][]byte{}
	prev := -1
	for off := 4; off < len(b); {
		id := binary.BigEndian.Uint16(b[off:])
		l := int(binary.BigEndian.Uint16(b[off+3:]))
		if int(id) <= prev {
			t.Fatalf("attributes not ascending at %#x", id)
		}
		prev = int(id)
		m[id] = b[off+5 : off+5+l]
		off += 5 + l
	}
	return m
}

func TestMAMAttributes(t *testing.T) {
	h := newHarness(t, "personality=lto6;capacity=1G")
	// Device attributes: remaining and maximum capacity in MiB.
	got := parseAttrs(t, h.ok(readAttrCDB(0, 0, 0), nil, 65536))
	if v := binary.BigEndian.Uint64(got[attrMaximumCapacity]); v != 1024 {
		t.Fatalf("maximum capacity %d", v)
	}
	if string(got[attrMediumSerialNumber][:6]) != "T00001" || got[attrMediumDensityCode][0] != 0x5a {
		t.Fatalf("medium attributes %q %x", got[attrMediumSerialNumber], got[attrMediumDensityCode])
	}
	// An attribute that is not set: 24/00 at FIRST ATTRIBUTE IDENTIFIER.
	s, _ := h.fail(readAttrCDB(0, 0, 0x0800), nil, 65536)
	wantBytes(t, "missing attribute", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c0 00 08"))

	// LTFS-style writes: application vendor, format version, volume lock
	// (vendor-unique 1623h), and a coherency record per partition.
	list := attrList(
		attr(0x0800, 1, []byte("IBM LTFS")),
		attr(0x080b, 1, []byte("2.4.0           ")),
		attr(0x1623, 0, []byte{0x01}),
		attr(attrVolumeCoherency, 0, []byte("partition-0-vci")),
	)
	h.ok(writeAttrCDB(0, len(list)), list, 0)
	h.ok(cdb(0x04, 0, 0, 0, 0, 0), nil, 0) // FORMAT keeps the MAM
	list = attrList(attr(attrVolumeCoherency, 0, []byte("p1")))
	s, _ = h.fail(writeAttrCDB(1, len(list)), list, 0) // partition 1 does not exist yet
	wantBytes(t, "no partition 1", hexBytes(s), hexBytes("70 00 05 00 00 00 00 0a 00 00 00 00 24 00 00 c0 00 07"))
	got = parseAttrs(t, h.ok(readAttrCDB(0, 0, 0x0800), nil, 65536))
	if string(got[0x0800]) != "IBM LTFS" || got[0x1623][0] != 1 || string(got[attrVolumeCoherency]) != "partition-0-vci" {
		t.Fatalf("attributes after write: %v", got)
	}
	if _, ok := got[0x0400]; ok {
		t.Fatal("attributes below FIRST ATTRIBUTE IDENTIFIER returned")
	}
	// Coherency information is per partition.
	h.d.mode.pending = []int64{100e6, 0}
	h.ok(cdb(0x04, 0, 1, 0, 0, 0), nil, 0)
	list = attrList(attr(attrVolumeCoherency, 0, []byte("p1")))
	h.ok(writeAttrCDB(1, len(list)), list, 0)
	got = parseAttrs(t, h.ok(readAttrCDB(0, 1, attrVolumeCoherency), nil, 65536))
	if string(got[attrVolumeCoherency]) != "p1" {
		t.Fatalf("partition 1 VCI %q", got[attrVolumeCoherency])
	}
	got = parseAttrs(t, h.ok(readAttrCDB(0, 0, attrVolumeCoherency), nil, 65536))
	if string(got[attrVolumeCoherency]) != "partition-0-vci" {
		t.Fatalf("partition 0 VCI %q", got[attrVolumeCoherency])
	}
	// Length 0 deletes.
	list = attrList(attr(0x0800, 1, nil))
	h.ok(writeAttrCDB(0, len(list)), list, 0)
	h.fail(readAttrCDB(0, 0, 0x0800), nil, 65536)

	// Read-only, reserved, too long, wrong format: refused, nothing stored.
	for _, bad := range [][]byte{
		attrList(attr(0x0801, 1, []byte("x")), attr(attrRemainingCapacity, 0, make([]byte, 8))),
		attrList(attr(0x0c00, 0, []byte{1})),
		attrList(attr(0x0800, 1, []byte("too long for eight"))),
		attrList(attr(0x0800, 0, []byte("binary"))),
	} {
		h.fail(writeAttrCDB(0, len(bad)), bad, 0)
	}
	h.fail(readAttrCDB(0, 0, 0x0801), nil, 65536)

	// The attribute list and the partition list.
	in := h.ok(readAttrCDB(1, 0, 0), nil, 65536)
	if binary.BigEndian.Uint32(in) != uint32(len(in)-4) || (len(in)-4)%2 != 0 {
		t.Fatalf("attribute list % x", in)
	}
	in = h.ok(readAttrCDB(3, 0, 0), nil, 64)
	wantBytes(t, "partition list", in, hexBytes("00 02 00 02"))
	in = h.ok(readAttrCDB(5, 0, 0), nil, 65536)
	if binary.BigEndian.Uint32(in) < 20 {
		t.Fatalf("supported attributes % x", in)
	}
	// Volume change reference went up with the writes and formats.
	got = parseAttrs(t, h.ok(readAttrCDB(0, 0, attrVolumeChangeReference), nil, 65536))
	if binary.BigEndian.Uint32(got[attrVolumeChangeReference]) < 2 {
		t.Fatalf("volume change reference % x", got[attrVolumeChangeReference])
	}
}

func TestMAMWriteProtected(t *testing.T) {
	h := newHarness(t, "wp=1")
	list := attrList(attr(0x0800, 1, []byte("IBM LTFS")))
	s, _ := h.fail(writeAttrCDB(0, len(list)), list, 0)
	wantBytes(t, "write protected", hexBytes(s), hexBytes("70 00 07 00 00 00 00 0a 00 00 00 00 27 00 00 00 00 00"))
}

func TestVCIPacking(t *testing.T) {
	var blob []byte
	blob = vciPut(blob, 0, []byte("zero"))
	blob = vciPut(blob, 1, []byte("one"))
	blob = vciPut(blob, 0, []byte("ZERO!"))
	if v, ok := vciGet(blob, 0); !ok || string(v) != "ZERO!" {
		t.Fatalf("partition 0: %q %v", v, ok)
	}
	if v, ok := vciGet(blob, 1); !ok || string(v) != "one" {
		t.Fatalf("partition 1: %q %v", v, ok)
	}
	blob = vciPut(blob, 1, nil)
	if _, ok := vciGet(blob, 1); ok {
		t.Fatal("deleted record still there")
	}
	// A corrupt value does not panic.
	if _, ok := vciGet([]byte{0, 0xff, 0xff, 1}, 0); ok {
		t.Fatal("corrupt value parsed")
	}
	vciPut([]byte{0, 0xff}, 0, []byte("x"))
}
