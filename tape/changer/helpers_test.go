package changer

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// The changer names its commands for the metrics and fault rules.
var _ scsi.CommandNamer = (*Changer)(nil)

// lab is a media directory with cartridges, vtape drives over it and a
// changer, driven through HandleCommand as the transport does.
type lab struct {
	t      testing.TB
	dir    string
	cfg    Config
	drives map[string]*tape.Drive
	c      *Changer
}

// newLab creates the cartridges in a new media directory, a drive per
// name in drives= of extra, and opens a changer configured by
// "media=<dir>;" + extra, with its power-on unit attention consumed.
func newLab(t testing.TB, extra string, barcodes ...string) *lab {
	t.Helper()
	dir := t.TempDir()
	for _, b := range barcodes {
		if err := cartridge.Create(dir, b, cartridge.Options{Capacity: cartridge.MinPartitionSize * 4}); err != nil {
			t.Fatal(err)
		}
	}
	s := "media=" + dir
	if extra != "" {
		s += ";" + extra
	}
	cfg, err := ParseConfig(s)
	if err != nil {
		t.Fatalf("ParseConfig(%q): %v", s, err)
	}
	l := &lab{t: t, dir: dir, cfg: cfg, drives: map[string]*tape.Drive{}}
	lib, err := cartridge.NewLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cfg.Drives {
		dcfg, err := tape.ParseConfig("media=" + dir + ";cleantime=30ms")
		if err != nil {
			t.Fatal(err)
		}
		d, err := tape.Open(name, dcfg, lib, logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		l.drives[name] = d
	}
	l.open()
	return l
}

// resolve finds the lab's drives.
func (l *lab) resolve(name string) (Drive, error) {
	if d, ok := l.drives[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("no drive %s", name)
}

// open (re)opens the changer over the lab's directory, as a restart does.
func (l *lab) open() {
	l.t.Helper()
	c, err := Open("lib0", l.cfg, l.resolve, logger(l.t))
	if err != nil {
		l.t.Fatalf("Open: %v", err)
	}
	l.c = c
	l.clearUA()
}

func (l *lab) clearUA() {
	l.t.Helper()
	for range 10 {
		r, _ := l.do(cdb(0x00, 0, 0, 0, 0, 0), 0)
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention {
			return
		}
	}
	l.t.Fatal("unit attentions do not clear")
}

// do runs one command with a Data-In buffer of inLen bytes (split over
// two segments, like iovecs) and returns the response and the bytes
// written.
func (l *lab) do(c []byte, inLen int) (scsi.Response, []byte) {
	l.t.Helper()
	in := make([]byte, inLen)
	buf := scsi.NewBuffer(in[:inLen/2], in[inLen/2:])
	r := l.c.HandleCommand(context.Background(), &scsi.Command{CDB: c, Data: buf})
	if buf.Written() > buf.Len() {
		l.t.Fatalf("Written %d > Len %d", buf.Written(), buf.Len())
	}
	return r, in[:buf.Written()]
}

func (l *lab) ok(c []byte, inLen int) []byte {
	l.t.Helper()
	r, in := l.do(c, inLen)
	if r.Status != scsi.StatusGood {
		l.t.Fatalf("% x: status %v sense %s", c, r.Status, senseHex(r.Sense))
	}
	return in
}

// fail runs a command that must end in CHECK CONDITION and returns the
// sense bytes as hex.
func (l *lab) fail(c []byte) string {
	l.t.Helper()
	r, _ := l.do(c, 0)
	if r.Status != scsi.StatusCheckCondition {
		l.t.Fatalf("% x: status %v, want check condition", c, r.Status)
	}
	return senseHex(r.Sense)
}

// wantSense checks key/ASC/ASCQ of a failing command.
func (l *lab) wantSense(c []byte, key scsi.SenseKey, asc scsi.ASC) {
	l.t.Helper()
	r, _ := l.do(c, 0)
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != key || r.Sense.ASC != asc {
		l.t.Fatalf("% x: status %v sense %v %v, want %v %v", c, r.Status, r.Sense.Key, r.Sense.ASC, key, asc)
	}
}

// where returns the element that holds barcode, checking that exactly
// one does.
func (l *lab) where(barcode string) Loc {
	l.t.Helper()
	inv := l.c.Inventory()
	n := 0
	for _, b := range inv.Barcodes() {
		if b == barcode {
			n++
		}
	}
	at, ok := inv.Where(barcode)
	if n != 1 || !ok {
		l.t.Fatalf("%s is in %d elements", barcode, n)
	}
	return at
}

func senseHex(s scsi.Sense) string {
	if s.Format == scsi.DescriptorFormat {
		return hex.EncodeToString(s.AppendDescriptor(nil))
	}
	return hex.EncodeToString(s.AppendFixed(nil))
}

func cdb(b ...byte) []byte { return b }

func move(src, dst uint16) []byte {
	return []byte{0xa5, 0, 0, 0, byte(src >> 8), byte(src), byte(dst >> 8), byte(dst), 0, 0, 0, 0}
}

// res is READ ELEMENT STATUS.
func res(typ byte, voltag bool, start, n uint16, dvcid bool, alloc int) []byte {
	b1 := typ
	if voltag {
		b1 |= 0x10
	}
	var b6 byte
	if dvcid {
		b6 = 1
	}
	return []byte{0xb8, b1, byte(start >> 8), byte(start), byte(n >> 8), byte(n), b6,
		byte(alloc >> 16), byte(alloc >> 8), byte(alloc), 0, 0}
}

// hexBytes parses spaced hex.
func hexBytes(s string) []byte {
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
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

// tag is a 36-byte primary volume tag of barcode, as hex.
func tag(barcode string) string {
	return hex.EncodeToString(appendVolTag(nil, barcode))
}

// logger logs to the test, but not from a fuzz target, which must not
// log through the *testing.F.
func logger(tb testing.TB) *zap.Logger {
	if _, ok := tb.(*testing.F); ok {
		return zap.NewNop()
	}
	return zaptest.NewLogger(tb)
}

func createImage(dir, barcode string) error {
	return cartridge.Create(dir, barcode, cartridge.Options{Capacity: cartridge.MinPartitionSize * 4})
}

// swapDrive replaces the lab's drive name by one configured with extra
// (a personality), over the same media directory.
func (l *lab) swapDrive(name, extra string) {
	l.t.Helper()
	lib, err := cartridge.NewLibrary(l.dir)
	if err != nil {
		l.t.Fatal(err)
	}
	cfg, err := tape.ParseConfig("media=" + l.dir + ";" + extra)
	if err != nil {
		l.t.Fatal(err)
	}
	d, err := tape.Open(name, cfg, lib, logger(l.t))
	if err != nil {
		l.t.Fatal(err)
	}
	_ = l.drives[name].Close()
	l.t.Cleanup(func() { _ = d.Close() })
	l.drives[name] = d
}
