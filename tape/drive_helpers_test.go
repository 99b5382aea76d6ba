package tape

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
)

// harness drives a Drive through HandleCommand the way the transport does.
type harness struct {
	t testing.TB
	d *Drive
}

// newHarness returns a drive on a memory cartridge "T00001" configured by
// extra (appended to "memory=1;barcode=T00001"), with the power-on and
// load unit attentions consumed.
func newHarness(t testing.TB, extra string) *harness {
	t.Helper()
	s := "memory=1;barcode=T00001"
	if extra != "" {
		s += ";" + extra
	}
	return newHarnessConfig(t, s)
}

// newHarnessConfig is newHarness with the whole config string.
func newHarnessConfig(t testing.TB, s string) *harness {
	t.Helper()
	cfg, err := ParseConfig(s)
	if err != nil {
		t.Fatalf("ParseConfig(%q): %v", s, err)
	}
	d, err := New("tape0", cfg, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	h := &harness{t: t, d: d}
	h.clearUA()
	return h
}

// clearUA consumes pending unit attentions with TEST UNIT READY.
func (h *harness) clearUA() {
	h.t.Helper()
	for range 10 {
		r, _ := h.do(cdb(0x00, 0, 0, 0, 0, 0), nil, 0)
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention {
			return
		}
	}
	h.t.Fatal("unit attentions do not clear")
}

// do runs one command with Data-Out out (nil for none) and a Data-In buffer
// of inLen bytes, and returns the response and the Data-In bytes written.
func (h *harness) do(c []byte, out []byte, inLen int) (scsi.Response, []byte) {
	h.t.Helper()
	var buf *scsi.Buffer
	var in []byte
	switch {
	case out != nil:
		buf = scsi.NewBuffer(out)
	case inLen > 0:
		in = make([]byte, inLen)
		// Split Data-In over several segments, like iovecs.
		var segs [][]byte
		for rest := in; len(rest) > 0; {
			n := min(len(rest), 4096+512)
			segs = append(segs, rest[:n])
			rest = rest[n:]
		}
		buf = scsi.NewBuffer(segs...)
	default:
		buf = scsi.NewBuffer()
	}
	r := h.d.HandleCommand(context.Background(), &scsi.Command{CDB: c, Data: buf})
	if buf.Written() > buf.Len() {
		h.t.Fatalf("Written %d > Len %d", buf.Written(), buf.Len())
	}
	return r, in[:buf.Written()]
}

// ok runs a command that must succeed.
func (h *harness) ok(c []byte, out []byte, inLen int) []byte {
	h.t.Helper()
	r, in := h.do(c, out, inLen)
	if r.Status != scsi.StatusGood {
		h.t.Fatalf("% x: status %v sense %s", c, r.Status, senseHex(r.Sense))
	}
	return in
}

// fail runs a command that must end in CHECK CONDITION and returns the
// fixed-format sense bytes as hex.
func (h *harness) fail(c []byte, out []byte, inLen int) (string, []byte) {
	h.t.Helper()
	r, in := h.do(c, out, inLen)
	if r.Status != scsi.StatusCheckCondition {
		h.t.Fatalf("% x: status %v, want check condition", c, r.Status)
	}
	return senseHex(r.Sense), in
}

func senseHex(s scsi.Sense) string {
	if s.Format == scsi.DescriptorFormat {
		return hex.EncodeToString(s.AppendDescriptor(nil))
	}
	return hex.EncodeToString(s.AppendFixed(nil))
}

func cdb(b ...byte) []byte { return b }

// Command builders.
func write6(fixed bool, n int) []byte {
	return []byte{0x0a, b2u8(fixed), byte(n >> 16), byte(n >> 8), byte(n), 0}
}

func read6(fixed, sili bool, n int) []byte {
	return []byte{0x08, b2u8(fixed) | b2u8(sili)<<1, byte(n >> 16), byte(n >> 8), byte(n), 0}
}

func weof(n int) []byte { return []byte{0x10, 0, byte(n >> 16), byte(n >> 8), byte(n), 0} }
func rewindCDB() []byte { return []byte{0x01, 0, 0, 0, 0, 0} }
func space6(code byte, n int) []byte {
	return []byte{0x11, code, byte(n >> 16), byte(n >> 8), byte(n), 0}
}

// block returns n bytes of a pattern that identifies block i.
func block(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*7 + j*13)
	}
	return b
}

// writeBlocks writes variable blocks of the given sizes (block(i, size)).
func (h *harness) writeBlocks(sizes ...int) {
	h.t.Helper()
	for i, n := range sizes {
		h.ok(write6(false, n), block(i, n), 0)
	}
}

// pos returns the drive's position (partition, object, file).
func (h *harness) pos() Position {
	h.t.Helper()
	h.d.mu.Lock()
	defer h.d.mu.Unlock()
	if h.d.med == nil {
		h.t.Fatal("no medium")
	}
	return h.d.med.Pos()
}

func (h *harness) wantPos(part int, obj, file uint64) {
	h.t.Helper()
	p := h.pos()
	if p.Partition != part || p.Object != obj || p.File != file {
		h.t.Fatalf("position = partition %d object %d file %d, want %d/%d/%d", p.Partition, p.Object, p.File, part, obj, file)
	}
}

// hexBytes parses spaced hex.
func hexBytes(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(fmt.Sprintf("hexBytes(%q): %v", s, err))
	}
	return b
}

func wantBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s:\n got % x\nwant % x", what, got, want)
	}
}
