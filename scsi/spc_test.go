package scsi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// compression is a test page shaped like SSC's Data Compression page (0Fh)
// with DCE changeable through Select.
type compression struct {
	dce     bool
	selects int
}

func (c *compression) page() scsi.ModePage {
	return scsi.ModePage{
		Code: 0x0f,
		Append: func(b []byte, pc scsi.PageControl) []byte {
			p := [16]byte{0x0f, 0x0e, 0x40, 0x80, 7: 1, 11: 1}
			switch pc {
			case scsi.PCChangeable:
				p = [16]byte{0x0f, 0x0e, 0x80}
			case scsi.PCDefault:
				p[2] |= 0x80
			default:
				if c.dce {
					p[2] |= 0x80
				}
			}
			return append(b, p[:]...)
		},
		Select: func(p []byte) error {
			c.selects++
			c.dce = p[2]&0x80 != 0
			return nil
		},
	}
}

// controlExtension is a fixed sub_page format page (0Ah/01h).
var controlExtension = hx("4a 01 001c" + strings.Repeat("00", 28))

type tapeFixture struct {
	*scsi.SPC
	comp      *compression
	ie        *scsi.InformationalExceptions
	devSpec   []uint8
	blockSize uint32
}

func newTape() *tapeFixture {
	f := &tapeFixture{
		SPC: &scsi.SPC{
			Identity: scsi.Identity{
				PeripheralType: 0x01, Removable: true,
				Vendor: "VSCSI", Product: "VTAPE", Revision: "0001", Serial: "TAPE0001",
				NAA:      scsi.NAARegistered(0x001405, 0x123456789),
				Versions: []uint16{scsi.VersionSAM5, scsi.VersionSPC4, scsi.VersionSSC3},
			},
		},
		comp:      &compression{dce: true},
		ie:        &scsi.InformationalExceptions{DExcpt: true},
		blockSize: 512,
	}
	// Registered out of order on purpose: MODE SENSE sorts.
	f.Modes = scsi.ModePages{
		Pages: []scsi.ModePage{
			f.comp.page(),
			f.ie.ModePage(),
			f.ControlModePage(),
			scsi.FixedModePage(controlExtension),
		},
		DeviceSpecific: func() uint8 { return 0x10 }, // buffered mode 1
		BlockDescriptor: func(b []byte, _ bool) []byte {
			d := [8]byte{0: 0x40}
			d[5], d[6], d[7] = byte(f.blockSize>>16), byte(f.blockSize>>8), byte(f.blockSize)
			return append(b, d[:]...)
		},
		SelectDeviceSpecific: func(v uint8) error {
			f.devSpec = append(f.devSpec, v)
			return nil
		},
	}
	f.VPD = []scsi.VPDPage{
		{Code: 0xb1, Append: func(b []byte) []byte { return append(b, "0123456789ABCDEF"...) }},
		{Code: 0x86, Append: func(b []byte) []byte { return append(b, make([]byte, 60)...) }},
	}
	f.Commands = []scsi.CommandInfo{
		{OpCode: scsi.Inquiry, Usage: hx("12 03 ff ffff 07")},
		{OpCode: scsi.TestUnitReady, Usage: hx("00 00 00 0000 07")},
		{OpCode: scsi.MaintenanceIn, ServiceAction: 0x0c, HasSA: true, Usage: hx("a3 0c 87 ff ffff ffffffff 00 07"), Timeout: 5},
		{OpCode: scsi.ServiceActionIn16, ServiceAction: 0x10, HasSA: true, Usage: hx("9e 10 ffffffffffffffff ffffffff 00 07"), Timeout: 30},
	}
	return f
}

// do runs fn on cdb with a Data-In buffer of n bytes (split in segments of
// the given sizes when segs is non-empty) and returns the response and the
// bytes written.
func do(t *testing.T, fn func(*scsi.Command) scsi.Response, cdb string, n int, segs ...int) (scsi.Response, []byte) {
	t.Helper()
	mem := make([]byte, n)
	for i := range mem {
		mem[i] = 0xee // so unwritten bytes show
	}
	var buf *scsi.Buffer
	if len(segs) == 0 {
		buf = scsi.NewBuffer(mem)
	} else {
		var ss [][]byte
		rest := mem
		for _, l := range segs {
			ss = append(ss, rest[:l])
			rest = rest[l:]
		}
		buf = scsi.NewBuffer(ss...)
	}
	r := fn(&scsi.Command{CDB: scsi.CDB(hx(cdb)), Data: buf})
	if buf.Written() > buf.Len() {
		t.Fatalf("Written %d > Len %d", buf.Written(), buf.Len())
	}
	return r, mem[:buf.Written()]
}

// out runs a Data-Out command with param as the buffer contents.
func out(fn func(*scsi.Command) scsi.Response, cdb string, param []byte) scsi.Response {
	return fn(&scsi.Command{CDB: scsi.CDB(hx(cdb)), Data: scsi.NewBuffer(param)})
}

func wantGood(t *testing.T, r scsi.Response) {
	t.Helper()
	if r.Status != scsi.StatusGood {
		t.Fatalf("status %v, sense % x, want GOOD", r.Status, r.Sense.Append(nil))
	}
}

// wantSense checks a CHECK CONDITION against golden sense bytes (in the
// format the response says).
func wantSense(t *testing.T, r scsi.Response, golden string) {
	t.Helper()
	if r.Status != scsi.StatusCheckCondition {
		t.Fatalf("status %v, want CHECK CONDITION with % x", r.Status, hx(golden))
	}
	if got := r.Sense.Append(nil); !bytes.Equal(got, hx(golden)) {
		t.Fatalf("sense\n got % x\nwant % x", got, hx(golden))
	}
}

func wantBytes(t *testing.T, got []byte, golden string) {
	t.Helper()
	if want := hx(golden); !bytes.Equal(got, want) {
		t.Fatalf("data\n got % x\nwant % x", got, want)
	}
}

// Sense data of the ILLEGAL REQUEST errors, fixed format.
func invalidCDB(field uint16, bit int) string {
	b := scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInCDB}.AppendFixed(nil)
	b[15] = 0xc0
	if bit >= 0 {
		b[15] |= 0x08 | byte(bit)
	}
	binary.BigEndian.PutUint16(b[16:], field)
	return hexString(b)
}

func invalidParam(field uint16, bit int) string {
	b := scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInParameterList}.AppendFixed(nil)
	b[15] = 0x80
	if bit >= 0 {
		b[15] |= 0x08 | byte(bit)
	}
	binary.BigEndian.PutUint16(b[16:], field)
	return hexString(b)
}

func hexString(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteString(strings.ToLower(string("0123456789ABCDEF"[c>>4]) + string("0123456789ABCDEF"[c&15])))
	}
	return sb.String()
}

const paramListLengthError = "70 00 05 00000000 0a 00000000 1a 00 00 000000"

// Standard INQUIRY of the tape fixture: 74 bytes.
var stdInquiry = "01 80 06 12 45 00 00 00" +
	"5653435349202020" + // "VSCSI   "
	"5654415045202020 2020202020202020" + // "VTAPE           "
	"30303031" + // "0001"
	strings.Repeat("00", 22) +
	"00a0 0460 0400 0000 0000 0000 0000 0000"

func TestInquiryStandard(t *testing.T) {
	f := newTape()
	r, got := do(t, f.Inquiry, "12 00 00 00 ff 00", 255)
	wantGood(t, r)
	wantBytes(t, got, stdInquiry)

	// Disk: PDT 0, no RMB, CMDQUE, VERSION given.
	d := &scsi.SPC{Identity: scsi.Identity{Vendor: "LIO-ORG", Product: "vdisk", Revision: "4.0", CmdQue: true, Version: 0x07}}
	r, got = do(t, d.Inquiry, "12 00 00 00 24 00", 255)
	wantGood(t, r)
	wantBytes(t, got, "00 00 07 12 45 00 00 02"+
		"4c494f2d4f524720"+"766469736b202020 2020202020202020"+"342e3020")
}

func TestInquiryTruncation(t *testing.T) {
	f := newTape()
	full := hx(stdInquiry)
	for _, tt := range []struct {
		name       string
		alloc, buf int
		segs       []int
		want       int
	}{
		{"alloc 0", 0, 255, nil, 0},
		{"alloc 5", 5, 255, nil, 5},
		{"alloc 36 (scsi_scan)", 36, 255, nil, 36},
		{"alloc 37 odd", 37, 255, nil, 37},
		{"alloc larger than data", 1000, 2000, nil, 74},
		{"buffer smaller than alloc", 255, 36, nil, 36},
		{"segmented buffer", 255, 110, []int{7, 3, 100}, 74},
		{"segmented short buffer", 255, 11, []int{7, 3, 1}, 11},
		{"empty buffer", 255, 0, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cdb := scsi.CDB{0x12, 0, 0, byte(tt.alloc >> 8), byte(tt.alloc), 0}
			r, got := do(t, f.Inquiry, hexString(cdb), tt.buf, tt.segs...)
			wantGood(t, r)
			if !bytes.Equal(got, full[:tt.want]) {
				t.Fatalf("got %d bytes % x, want the first %d", len(got), got, tt.want)
			}
		})
	}
}

func TestInquiryVPD(t *testing.T) {
	f := newTape()
	for _, tt := range []struct {
		name, cdb, want string
	}{
		{"supported pages, sorted and with extras", "12 01 00 00ff 00", "01 00 0005 00 80 83 86 b1"},
		{"unit serial number", "12 01 80 00ff 00", "01 80 0008 5441504530303031"},
		{"device identification: NAA 5 + T10 vendor ID", "12 01 83 00ff 00",
			"01 83 0020" +
				"01 03 00 08 5001405123456789" + // binary, LU, NAA; IEEE Registered
				"02 01 00 10 5653435349202020 5441504530303031"}, // ASCII, LU, T10: "VSCSI   TAPE0001"
		{"extra page b1", "12 01 b1 00ff 00", "01 b1 0010 30313233343536373839414243444546"},
		{"extra page truncated to alloc", "12 01 86 0008 00", "01 86 003c 0000 0000"},
		{"device identification truncated to 5", "12 01 83 0005 00", "01 83 0020 01"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got := do(t, f.Inquiry, tt.cdb, 512)
			wantGood(t, r)
			wantBytes(t, got, tt.want)
		})
	}
}

func TestInquiryVPDOverride(t *testing.T) {
	// An extra page 0x80 replaces the built-in one; 0x00 is always built in.
	s := &scsi.SPC{Identity: scsi.Identity{Serial: "X"}, VPD: []scsi.VPDPage{
		{Code: 0x80, Append: func(b []byte) []byte { return append(b, "OVERRIDE"...) }},
		{Code: 0x00, Append: func(b []byte) []byte { return append(b, 0xff) }},
		{Code: 0xc0}, // nil Append: not a page
	}}
	r, got := do(t, s.Inquiry, "12 01 80 00ff 00", 255)
	wantGood(t, r)
	wantBytes(t, got, "00 80 0008 4f56455252494445")
	r, got = do(t, s.Inquiry, "12 01 00 00ff 00", 255)
	wantGood(t, r)
	wantBytes(t, got, "00 00 0003 00 80 83")
	r, _ = do(t, s.Inquiry, "12 01 c0 00ff 00", 255)
	wantSense(t, r, invalidCDB(2, -1))
	// Without an NAA only the T10 vendor ID designator is sent.
	r, got = do(t, s.Inquiry, "12 01 83 00ff 00", 255)
	wantGood(t, r)
	wantBytes(t, got, "00 83 000d 02 01 00 09 2020202020202020 58")
}

func TestInquiryErrors(t *testing.T) {
	f := newTape()
	for _, tt := range []struct {
		name, cdb, sense string
	}{
		{"CMDDT", "12 02 00 00ff 00", invalidCDB(1, 1)},
		{"CMDDT with EVPD", "12 03 00 00ff 00", invalidCDB(1, 1)},
		{"page code without EVPD", "12 00 80 00ff 00", invalidCDB(2, -1)},
		{"unsupported VPD page", "12 01 c0 00ff 00", invalidCDB(2, -1)},
		{"VPD b0 not provided", "12 01 b0 00ff 00", invalidCDB(2, -1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got := do(t, f.Inquiry, tt.cdb, 255)
			wantSense(t, r, tt.sense)
			if len(got) != 0 {
				t.Errorf("data written with CHECK CONDITION: % x", got)
			}
		})
	}
	// Descriptor format when D_SENSE is set.
	f.SenseFormat = scsi.DescriptorFormat
	r, _ := do(t, f.Inquiry, "12 00 80 00ff 00", 255)
	wantSense(t, r, "72 05 24 00 000000 08 | 02 06 00 00 c0 0002 00")
}

func TestIdentityValidate(t *testing.T) {
	good := scsi.Identity{Vendor: "VSCSI", Product: "VTAPE", Revision: "0001", Serial: "S1", NAA: scsi.NAARegistered(0x1405, 1)}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid identity: %v", err)
	}
	for _, tt := range []struct {
		name string
		mod  func(*scsi.Identity)
		want string
	}{
		{"vendor too long", func(i *scsi.Identity) { i.Vendor = "123456789" }, "vendor"},
		{"product too long", func(i *scsi.Identity) { i.Product = strings.Repeat("p", 17) }, "product"},
		{"revision too long", func(i *scsi.Identity) { i.Revision = "12345" }, "revision"},
		{"serial not ASCII", func(i *scsi.Identity) { i.Serial = "sé" }, "serial"},
		{"vendor control char", func(i *scsi.Identity) { i.Vendor = "a\tb" }, "vendor"},
		{"NAA not type 5", func(i *scsi.Identity) { i.NAA = 0x6000000000000001 }, "naa"},
		{"too many versions", func(i *scsi.Identity) { i.Versions = make([]uint16, 9) }, "versions"},
		{"peripheral type", func(i *scsi.Identity) { i.PeripheralType = 0x20 }, "peripheral"},
	} {
		id := good
		tt.mod(&id)
		err := id.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tt.name, err, tt.want)
		}
	}
	// A bad identity still gives well-formed INQUIRY data.
	s := &scsi.SPC{Identity: scsi.Identity{Vendor: "é\x00TOOLONGVENDOR", Product: "p", Revision: "r"}}
	r, got := do(t, s.Inquiry, "12 00 00 0024 00", 36)
	wantGood(t, r)
	if string(got[8:16]) != "???TOOLO" { // é is 2 bytes, then NUL
		t.Errorf("vendor field %q", got[8:16])
	}
}

func TestNAARegistered(t *testing.T) {
	if got := scsi.NAARegistered(0x001405, 0x123456789); got != 0x5001405123456789 {
		t.Errorf("NAARegistered = %#x", got)
	}
	if got := scsi.NAARegistered(0xffffffff, 0xffffffffffffffff); got != 0x5fffffffffffffff {
		t.Errorf("NAARegistered masks: %#x", got)
	}
}

func TestRequestSense(t *testing.T) {
	f := newTape()
	// Nothing pending: NO SENSE, fixed, 18 bytes.
	r, got := do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, scsi.Sense{}) }, "03 00 00 00 fc 00", 252)
	wantGood(t, r)
	wantBytes(t, got, "70 00 00 00000000 0a 00000000 00 00 00 000000")

	// DESC=1: descriptor format, whatever cur.Format says.
	cur := scsi.Sense{Key: scsi.NotReady, ASC: scsi.MediumNotPresent, Format: scsi.FixedFormat}
	r, got = do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, cur) }, "03 01 00 00 fc 00", 252)
	wantGood(t, r)
	wantBytes(t, got, "72 02 3a 00 000000 00")

	// DESC=0 with a unit in descriptor mode: still fixed.
	f.SenseFormat = scsi.DescriptorFormat
	cur.Format = scsi.DescriptorFormat
	r, got = do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, cur) }, "03 00 00 00 fc 00", 252)
	wantGood(t, r)
	wantBytes(t, got, "70 00 02 00000000 0a 00000000 3a 00 00 000000")
	f.SenseFormat = scsi.FixedFormat

	// Tape sense with flags survives.
	fm := scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Filemark: true, Valid: true, Info: 1}
	r, got = do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, fm) }, "03 00 00 00 12 00", 252)
	wantGood(t, r)
	wantBytes(t, got, "f0 00 80 00000001 0a 00000000 00 01 00 000000")

	// Allocation length 0 and 5.
	_, got = do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, fm) }, "03 00 00 00 00 00", 252)
	wantBytes(t, got, "")
	_, got = do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, fm) }, "03 00 00 00 05 00", 252)
	wantBytes(t, got, "f0 00 80 0000")
}

func TestRequestSenseReportsUnitAttention(t *testing.T) {
	f := newTape()
	f.UA.Add(scsi.NotReadyToReadyChange)
	// A pending condition other than the UA wins and the UA stays.
	cur := scsi.Sense{Key: scsi.NotReady, ASC: scsi.MediumNotPresent}
	_, got := do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, cur) }, "03 00 00 00 12 00", 252)
	wantBytes(t, got, "70 00 02 00000000 0a 00000000 3a 00 00 000000")
	if !f.UA.Pending() {
		t.Fatal("UA consumed while other sense was reported")
	}
	// No other sense: the UA is reported and cleared.
	r, got := do(t, func(c *scsi.Command) scsi.Response { return f.RequestSense(c, scsi.Sense{}) }, "03 00 00 00 12 00", 252)
	wantGood(t, r)
	wantBytes(t, got, "70 00 06 00000000 0a 00000000 28 00 00 000000")
	if f.UA.Pending() {
		t.Fatal("UA still pending after REQUEST SENSE reported it")
	}
}

func TestTakeUnitAttention(t *testing.T) {
	f := newTape()
	f.UA.Add(scsi.PowerOnResetOrBusDeviceReset)
	f.UA.Add(scsi.NotReadyToReadyChange)
	cmd := func(op byte) *scsi.Command {
		return &scsi.Command{CDB: scsi.CDB{op, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer()}
	}
	for _, op := range []byte{0x12, 0xa0, 0x03} {
		if r, ok := f.TakeUnitAttention(cmd(op)); ok || r.Status != scsi.StatusGood {
			t.Errorf("opcode %#02x took a unit attention", op)
		}
	}
	r, ok := f.TakeUnitAttention(cmd(0x00))
	if !ok {
		t.Fatal("TEST UNIT READY did not get the unit attention")
	}
	wantSense(t, r, "70 00 06 00000000 0a 00000000 29 00 00 000000")
	f.SenseFormat = scsi.DescriptorFormat
	r, ok = f.TakeUnitAttention(cmd(0x08))
	if !ok {
		t.Fatal("second unit attention not reported")
	}
	wantSense(t, r, "72 06 28 00 000000 00")
	if _, ok := f.TakeUnitAttention(cmd(0x00)); ok {
		t.Fatal("unit attention reported twice")
	}
	// Empty CDB: no panic, treated as opcode 0.
	f.UA.Add(scsi.ModeParametersChanged)
	if _, ok := f.TakeUnitAttention(&scsi.Command{Data: scsi.NewBuffer()}); !ok {
		t.Fatal("empty CDB did not take the unit attention")
	}
}

// Mode pages of the tape fixture as MODE SENSE reports them.
const (
	blockDesc     = "40 000000 00 000200"
	controlPage   = "0a 0a 02 00 00 00 0000 0000 0000"
	controlDSense = "0a 0a 06 00 00 00 0000 0000 0000"
	controlMask   = "0a 0a 04 00 00 00 0000 0000 0000"
	compPage      = "0f 0e c0 80 00000001 00000001 00000000"
	compMask      = "0f 0e 80 00 00000000 00000000 00000000"
	iePage        = "1c 0a 08 00 00000000 00000000"
	ieMask        = "1c 0a 0d 0f ffffffff ffffffff"
)

var ctlExtPage = "4a 01 001c" + strings.Repeat("00", 28)

func TestModeSense(t *testing.T) {
	f := newTape()
	for _, tt := range []struct {
		name, cdb, want string
	}{
		// st's open: MODE SENSE(6), page 0, DBD=0, allocation length 12.
		{"st block descriptor", "1a 00 00 00 0c 00", "0b 00 10 08" + blockDesc},
		{"6: control page with block descriptor", "1a 00 0a 00 ff 00", "17 00 10 08" + blockDesc + controlPage},
		{"6: control page, DBD", "1a 08 0a 00 ff 00", "0f 00 10 00" + controlPage},
		{"10: control page with block descriptor", "5a 00 0a 00 00 00 00 00 ff 00",
			"001a 00 10 00 00 0008" + blockDesc + controlPage},
		{"10: control page, DBD", "5a 08 0a 00 00 00 00 00 ff 00", "0012 00 10 00 00 0000" + controlPage},
		{"10: LLBAA on a unit without long descriptors", "5a 10 0a 00 00 00 00 00 ff 00",
			"001a 00 10 00 00 0008" + blockDesc + controlPage},
		{"6: all pages, subpage 00 (sorted, page_0 only)", "1a 00 3f 00 ff 00",
			"33 00 10 08" + blockDesc + controlPage + compPage + iePage},
		{"10: all pages and subpages", "5a 08 3f ff 00 00 00 00 ff 00",
			"004e 00 10 00 00 0000" + controlPage + ctlExtPage + compPage + iePage},
		{"6: page 0a, all subpages", "1a 08 0a ff ff 00", "2f 00 10 00" + controlPage + ctlExtPage},
		{"6: subpage 0a/01", "1a 08 0a 01 ff 00", "23 00 10 00" + ctlExtPage},
		{"6: changeable values", "1a 08 4a 00 ff 00", "0f 00 10 00" + controlMask},
		{"6: changeable, all pages", "1a 08 7f 00 ff 00", "2b 00 10 00" + controlMask + compMask + ieMask},
		{"6: default values", "1a 08 8f 00 ff 00", "13 00 10 00" + compPage},
		{"6: changeable of a fixed page is zeros", "1a 08 4a 01 ff 00", "23 00 10 00 4a 01 001c" + strings.Repeat("00", 28)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got := do(t, f.ModeSense, tt.cdb, 512)
			wantGood(t, r)
			wantBytes(t, got, tt.want)
		})
	}
}

func TestModeSenseCurrentFollowsState(t *testing.T) {
	f := newTape()
	f.comp.dce = false
	f.SenseFormat = scsi.DescriptorFormat
	f.blockSize = 0 // variable
	_, got := do(t, f.ModeSense, "1a 00 3f 00 ff 00", 512)
	wantBytes(t, got, "33 00 10 08 40 000000 00 000000"+controlDSense+
		"0f 0e 40 80 00000001 00000001 00000000"+iePage)
	// Default values do not follow the current state.
	_, got = do(t, f.ModeSense, "1a 08 8a 00 ff 00", 512)
	wantBytes(t, got, "0f 00 10 00"+controlPage)
}

func TestModeSenseLongLBA(t *testing.T) {
	s := &scsi.SPC{}
	s.Modes = scsi.ModePages{
		Pages: []scsi.ModePage{s.ControlModePage()},
		BlockDescriptor: func(b []byte, long bool) []byte {
			if long {
				return append(b, hx("0000000000100000 00000000 00000200")...)
			}
			return append(b, hx("00100000 00 000200")...)
		},
		MediumType: 0x00,
	}
	r, got := do(t, s.ModeSense, "5a 10 0a 00 00 00 00 00 ff 00", 512)
	wantGood(t, r)
	wantBytes(t, got, "0022 00 00 01 00 0010 0000000000100000 00000000 00000200"+controlPage)
	// MODE SENSE(6) ignores LLBAA (byte 1 bit 4 is reserved there).
	_, got = do(t, s.ModeSense, "1a 10 0a 00 ff 00", 512)
	wantBytes(t, got, "17 00 00 08 00100000 00 000200"+controlPage)
	// MODE SENSE(10) without LLBAA: short form.
	_, got = do(t, s.ModeSense, "5a 00 0a 00 00 00 00 00 ff 00", 512)
	wantBytes(t, got, "001a 00 00 00 00 0008 00100000 00 000200"+controlPage)
}

func TestModeSenseNoBlockDescriptorNoPages(t *testing.T) {
	s := &scsi.SPC{}
	r, got := do(t, s.ModeSense, "1a 00 00 00 ff 00", 512)
	wantGood(t, r)
	wantBytes(t, got, "03 00 00 00")
	r, _ = do(t, s.ModeSense, "1a 00 3f 00 ff 00", 512)
	wantGood(t, r)
	r, _ = do(t, s.ModeSense, "1a 00 08 00 ff 00", 512)
	wantSense(t, r, invalidCDB(2, 5))
}

func TestModeSenseTruncation(t *testing.T) {
	f := newTape()
	full := hx("004e 00 10 00 00 0000" + controlPage + ctlExtPage + compPage + iePage)
	for _, alloc := range []int{0, 1, 5, 8, 13, 79, 80, 81, 1000} {
		cdb := scsi.CDB{0x5a, 0x08, 0x3f, 0xff, 0, 0, 0, byte(alloc >> 8), byte(alloc), 0}
		r, got := do(t, f.ModeSense, hexString(cdb), 2000)
		wantGood(t, r)
		n := min(alloc, len(full))
		if !bytes.Equal(got, full[:n]) {
			t.Errorf("alloc %d: got % x, want the first %d bytes (MODE DATA LENGTH still the full length)", alloc, got, n)
		}
	}
	// Short Data-In buffer.
	_, got := do(t, f.ModeSense, "5a 08 3f ff 00 00 00 00 ff 00", 10, 3, 7)
	if !bytes.Equal(got, full[:10]) {
		t.Errorf("10-byte buffer: % x", got)
	}
}

func TestModeSense6Limit(t *testing.T) {
	// Pages that do not fit MODE SENSE(6)'s 256 bytes are left out, whole.
	big := func(code byte) scsi.ModePage {
		p := make([]byte, 2+0xfe)
		p[0], p[1] = code, 0xfe
		return scsi.FixedModePage(p)
	}
	s := &scsi.SPC{}
	s.Modes.Pages = []scsi.ModePage{big(0x20), s.ControlModePage(), big(0x21)}
	r, got := do(t, s.ModeSense, "1a 08 3f 00 ff 00", 1024)
	wantGood(t, r)
	if int(got[0]) != len(got)-1 {
		t.Fatalf("MODE DATA LENGTH %d for %d bytes", got[0], len(got))
	}
	if len(got) != 4+12 || !bytes.Equal(got[4:], hx(controlPage)) {
		t.Fatalf("got %d bytes, want header + control page only", len(got))
	}
	// MODE SENSE(10) has room for all.
	_, got = do(t, s.ModeSense, "5a 08 3f 00 00 00 00 ffff 00", 4096)
	if len(got) != 8+12+256+256 || binary.BigEndian.Uint16(got) != uint16(len(got)-2) {
		t.Fatalf("MODE SENSE(10): %d bytes, length field %d", len(got), binary.BigEndian.Uint16(got))
	}
}

func TestModeSenseErrors(t *testing.T) {
	f := newTape()
	saved := "70 00 05 00000000 0a 00000000 39 00 00 000000"
	for _, tt := range []struct {
		name, cdb, sense string
	}{
		{"saved values", "1a 00 ca 00 ff 00", saved},
		{"saved values, all pages (10)", "5a 00 ff 00 00 00 00 00 ff 00", saved},
		{"unknown page", "1a 00 19 00 ff 00", invalidCDB(2, 5)},
		{"unknown page (10)", "5a 00 01 00 00 00 00 00 ff 00", invalidCDB(2, 5)},
		{"known page, unknown subpage", "1a 00 0a 05 ff 00", invalidCDB(3, -1)},
		{"page 0f has no subpages", "1a 00 0f 01 ff 00", invalidCDB(3, -1)},
		{"all pages, bad subpage", "1a 00 3f 10 ff 00", invalidCDB(3, -1)},
		{"page 0 with a subpage", "1a 00 00 01 ff 00", invalidCDB(2, 5)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got := do(t, f.ModeSense, tt.cdb, 255)
			wantSense(t, r, tt.sense)
			if len(got) != 0 {
				t.Errorf("data with CHECK CONDITION: % x", got)
			}
		})
	}
	r, _ := do(t, f.ModeSense, "12 00 00 00 ff 00", 255)
	wantSense(t, r, "70 00 05 00000000 0a 00000000 20 00 00 000000")
}

func TestModeSelectControlDSense(t *testing.T) {
	f := newTape()
	// MODE SELECT(6), PF: switch to descriptor sense.
	r := out(f.ModeSelect, "15 10 00 00 10 00", hx("00 00 00 00"+controlDSense))
	wantGood(t, r)
	if f.SenseFormat != scsi.DescriptorFormat {
		t.Fatal("D_SENSE=1 did not switch to descriptor format")
	}
	// Errors now come in descriptor format.
	r, _ = do(t, f.Inquiry, "12 02 00 00ff 00", 255)
	wantSense(t, r, "72 05 24 00 000000 08 | 02 06 00 00 c9 0001 00")
	_, got := do(t, f.ModeSense, "1a 08 0a 00 ff 00", 255)
	wantBytes(t, got, "0f 00 10 00"+controlDSense)
	// MODE SELECT(10) back to fixed.
	r = out(f.ModeSelect, "55 10 00 00 00 00 00 0014 00", hx("0000 00 00 00 00 0000"+controlPage))
	wantGood(t, r)
	if f.SenseFormat != scsi.FixedFormat {
		t.Fatal("D_SENSE=0 did not switch back to fixed format")
	}
	if f.UA.Pending() {
		t.Fatal("MODE SELECT queued a unit attention for the only initiator")
	}
}

func TestModeSelectPagesAndDescriptors(t *testing.T) {
	f := newTape()
	// Compression off, with the current block descriptor and the
	// device-specific byte (buffered mode 0).
	param := hx("00 00 00 08" + blockDesc + "0f 0e 40 80 00000001 00000001 00000000")
	r := out(f.ModeSelect, "15 10 00 00 1c 00", param)
	wantGood(t, r)
	if f.comp.dce || f.comp.selects != 1 {
		t.Fatalf("compression page: dce=%v selects=%d", f.comp.dce, f.comp.selects)
	}
	if len(f.devSpec) != 1 || f.devSpec[0] != 0x00 {
		t.Fatalf("SelectDeviceSpecific calls: % x", f.devSpec)
	}
	// Several pages in one list, PS bit set (reserved in MODE SELECT: ignored).
	param = hx("00 00 00 00" + "8f 0e c0 80 00000001 00000001 00000000" + controlPage + iePage)
	r = out(f.ModeSelect, "15 10 00 00 2c 00", param)
	wantGood(t, r)
	if !f.comp.dce {
		t.Fatal("compression not switched back on")
	}
	// Informational exceptions: TEST, MRIE 6, interval, report count.
	param = hx("00 00 00 00 1c 0a 04 06 0000000a 00000001")
	wantGood(t, out(f.ModeSelect, "15 10 00 00 10 00", param))
	if *f.ie != (scsi.InformationalExceptions{Test: true, MRIE: 6, IntervalTimer: 10, ReportCount: 1}) {
		t.Fatalf("informational exceptions: %+v", *f.ie)
	}
	_, got := do(t, f.ModeSense, "1a 08 1c 00 ff 00", 255)
	wantBytes(t, got, "0f 00 10 00 1c 0a 04 06 0000000a 00000001")
	_, got = do(t, f.ModeSense, "1a 08 9c 00 ff 00", 255)
	wantBytes(t, got, "0f 00 10 00"+iePage) // defaults unchanged
	// Unchanged fixed sub_page page is accepted.
	wantGood(t, out(f.ModeSelect, "55 10 00 00 00 00 00 0028 00", hx("0000 00 00 00 00 0000"+ctlExtPage)))
	// Header only, and parameter list length 0.
	wantGood(t, out(f.ModeSelect, "15 10 00 00 04 00", hx("00 00 10 00")))
	wantGood(t, out(f.ModeSelect, "15 00 00 00 00 00", nil))
}

func TestModeSelectBlockDescriptorCallback(t *testing.T) {
	f := newTape()
	var got []byte
	var gotLong bool
	f.Modes.SelectBlockDescriptor = func(d []byte, long bool) error {
		got, gotLong = append([]byte(nil), d...), long
		if d[0] != 0x40 {
			return scsi.InvalidParameter(0, -1)
		}
		f.blockSize = uint32(d[5])<<16 | uint32(d[6])<<8 | uint32(d[7])
		return nil
	}
	// st: MODE SELECT(6) header + descriptor to set 1 KiB fixed blocks.
	wantGood(t, out(f.ModeSelect, "15 10 00 00 0c 00", hx("00 00 10 08 40 000000 00 000400")))
	if f.blockSize != 1024 || gotLong || !bytes.Equal(got, hx("40 000000 00 000400")) {
		t.Fatalf("descriptor % x long=%v, block size %d", got, gotLong, f.blockSize)
	}
	// The callback's pointer (byte 0 of the descriptor) becomes byte 4 of
	// the parameter list (MODE SELECT(6)) or byte 8 (MODE SELECT(10)).
	r := out(f.ModeSelect, "15 10 00 00 0c 00", hx("00 00 10 08 41 000000 00 000400"))
	wantSense(t, r, invalidParam(4, -1))
	r = out(f.ModeSelect, "55 10 00 00 00 00 00 0010 00", hx("0000 00 10 00 00 0008 41 000000 00 000400"))
	wantSense(t, r, invalidParam(8, -1))
	// Long descriptors reach the callback with long=true.
	wantGood(t, out(f.ModeSelect, "55 10 00 00 00 00 00 0018 00",
		hx("0000 00 10 01 00 0010 40 000000 00 000400 00000000 00000000")))
	if !gotLong || len(got) != 16 {
		t.Fatalf("long descriptor: % x long=%v", got, gotLong)
	}
}

func TestModeSelectErrors(t *testing.T) {
	for _, tt := range []struct {
		name, cdb, param, sense string
	}{
		{"SP", "15 11 00 00 10 00", "00 00 00 00" + controlPage, invalidCDB(1, 0)},
		{"PF=0 with a page", "15 00 00 00 10 00", "00 00 00 00" + controlPage, invalidParam(4, -1)},
		{"less data than the parameter list length", "15 10 00 00 20 00", "00 00 00 00" + controlPage, paramListLengthError},
		{"list shorter than the header", "15 10 00 00 03 00", "00 00 00", paramListLengthError},
		{"list shorter than the header (10)", "55 10 00 00 00 00 00 0006 00", "0000 00 00 00 00", paramListLengthError},
		{"block descriptor truncated", "15 10 00 00 08 00", "00 00 00 08 40 000000", paramListLengthError},
		{"block descriptor length not a multiple of 8", "15 10 00 00 0b 00", "00 00 00 07 40 000000 00 0002", invalidParam(3, -1)},
		{"page header truncated", "15 10 00 00 05 00", "00 00 00 00 0a", paramListLengthError},
		{"page truncated", "15 10 00 00 0c 00", "00 00 00 00 0a 0a 02 00 00 00 00 00", paramListLengthError},
		{"unknown page", "15 10 00 00 06 00", "00 00 00 00 19 00", invalidParam(4, 5)},
		{"unknown subpage", "15 10 00 00 08 00", "00 00 00 00 4a 05 0000", invalidParam(5, -1)},
		{"page_0 page sent in sub_page format", "15 10 00 00 12 00", "00 00 00 00 4f 00 000a 00 00 00 00 00 00 00 00 00 00", invalidParam(4, 6)},
		{"wrong page length", "15 10 00 00 0e 00", "00 00 00 00 0a 08 02 00 00 00 0000 0000", invalidParam(5, -1)},
		{"non-changeable bit (GLTSD)", "15 10 00 00 10 00", "00 00 00 00 0a 0a 00 00 00 00 0000 0000 0000", invalidParam(6, 1)},
		{"non-changeable byte (busy timeout)", "15 10 00 00 10 00", "00 00 00 00 0a 0a 02 00 00 00 0000 0001 0000", invalidParam(13, 0)},
		{"compression DCC not changeable", "15 10 00 00 14 00", "00 00 00 00 0f 0e 80 80 00000001 00000001 00000000", invalidParam(6, 6)},
		{"fixed page changed", "15 10 00 00 24 00", "00 00 00 00 4a 01 001c 10" + strings.Repeat("00", 27), invalidParam(8, 4)},
		{"block descriptor differs, no callback", "15 10 00 00 0c 00", "00 00 00 08 40 000000 00 000400", invalidParam(10, 2)},
		{"long descriptor, unit has none", "55 10 00 00 00 00 00 0018 00", "0000 00 00 01 00 0010" + strings.Repeat("00", 16), invalidParam(6, -1)},
		{"IE: MRIE 1 is obsolete", "15 10 00 00 10 00", "00 00 00 00 1c 0a 08 01 00000000 00000000", invalidParam(7, 3)},
		{"IE: MRIE 7 reserved", "15 10 00 00 10 00", "00 00 00 00 1c 0a 08 07 00000000 00000000", invalidParam(7, 3)},
		{"IE: TEST with DEXCPT", "15 10 00 00 10 00", "00 00 00 00 1c 0a 0c 00 00000000 00000000", invalidParam(6, 2)},
		{"wrong opcode", "1a 10 00 00 10 00", "", "70 00 05 00000000 0a 00000000 20 00 00 000000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newTape()
			wantSense(t, out(f.ModeSelect, tt.cdb, hx(tt.param)), tt.sense)
			// SelectDeviceSpecific may have run when a page's Select refuses
			// a value in the apply pass; the structural checks change nothing.
			if f.comp.selects != 0 || f.SenseFormat != scsi.FixedFormat || *f.ie != (scsi.InformationalExceptions{DExcpt: true}) {
				t.Errorf("a refused MODE SELECT changed state")
			}
		})
	}
}

func TestModeSelectValidatesBeforeApplying(t *testing.T) {
	f := newTape()
	// A good compression page followed by a bad control page: nothing applied.
	param := hx("00 00 00 00" + "0f 0e 40 80 00000001 00000001 00000000" + "0a 0a 00 00 00 00 0000 0000 0000")
	wantSense(t, out(f.ModeSelect, "15 10 00 00 20 00", param), invalidParam(4+16+2, 1))
	if f.comp.selects != 0 || !f.comp.dce || len(f.devSpec) != 0 {
		t.Fatal("compression page applied although the list was refused")
	}
}

func TestModeSelectCallbackErrors(t *testing.T) {
	f := newTape()
	f.Modes.SelectDeviceSpecific = func(v uint8) error {
		if v&0x0f != 0 {
			return scsi.InvalidParameter(0, 3) // SPEED
		}
		return nil
	}
	wantSense(t, out(f.ModeSelect, "15 10 00 00 04 00", hx("00 00 01 00")), invalidParam(2, 3))
	wantSense(t, out(f.ModeSelect, "55 10 00 00 00 00 00 0008 00", hx("0000 00 01 00 00 0000")), invalidParam(3, 3))
	// A non-SCSI error from a callback is a device fault.
	f.Modes.SelectDeviceSpecific = func(uint8) error { return errors.New("disk full") }
	wantSense(t, out(f.ModeSelect, "15 10 00 00 04 00", hx("00 00 00 00")), "70 00 04 00000000 0a 00000000 44 00 00 000000")
	// A CDB-relative pointer is not moved.
	f.Modes.SelectDeviceSpecific = func(uint8) error { return scsi.InvalidField(1, 4) }
	wantSense(t, out(f.ModeSelect, "15 10 00 00 04 00", hx("00 00 00 00")), invalidCDB(1, 4))
}

// Usage data of the RSOC fixture commands.
const (
	inqUsage  = "12 03 ff ffff 07"
	rsocUsage = "a3 0c 87 ff ffff ffffffff 00 07"
	rc16Usage = "9e 10 ffffffffffffffff ffffffff 00 07"
)

func TestReportSupportedOpCodesAll(t *testing.T) {
	f := newTape()
	r, got := do(t, f.ReportSupportedOpCodes, "a3 0c 00 00 0000 00001000 00 00", 4096)
	wantGood(t, r)
	wantBytes(t, got, "00000020"+
		"12 00 0000 00 00 0006"+
		"00 00 0000 00 00 0006"+
		"a3 00 000c 00 01 000c"+
		"9e 00 0010 00 01 0010")
	// RCTD: each descriptor followed by a command timeouts descriptor.
	r, got = do(t, f.ReportSupportedOpCodes, "a3 0c 80 00 0000 00001000 00 00", 4096)
	wantGood(t, r)
	wantBytes(t, got, "00000050"+
		"12 00 0000 00 02 0006 000a 00 00 00000000 00000000"+
		"00 00 0000 00 02 0006 000a 00 00 00000000 00000000"+
		"a3 00 000c 00 03 000c 000a 00 00 00000005 00000005"+
		"9e 00 0010 00 03 0010 000a 00 00 0000001e 0000001e")
	// Truncated to 7 bytes, length field intact.
	_, got = do(t, f.ReportSupportedOpCodes, "a3 0c 00 00 0000 00000007 00 00", 4096)
	wantBytes(t, got, "00000020 12 00 00")
	// Empty command list.
	s := &scsi.SPC{}
	_, got = do(t, s.ReportSupportedOpCodes, "a3 0c 00 00 0000 00000100 00 00", 256)
	wantBytes(t, got, "00000000")
}

func TestReportSupportedOpCodesOne(t *testing.T) {
	f := newTape()
	notSupported := "00 01 0000"
	for _, tt := range []struct {
		name, cdb, want string
	}{
		// What sd sends at attach (scsi_report_opcode).
		{"sd: INQUIRY, option 1", "a3 0c 01 12 0000 00000200 00 00", "00 03 0006" + inqUsage},
		{"sd: WRITE SAME(16) not supported", "a3 0c 01 93 0000 00000200 00 00", notSupported},
		{"sd: UNMAP not supported", "a3 0c 01 42 0000 00000200 00 00", notSupported},
		{"option 2: opcode + service action", "a3 0c 02 9e 0010 00000200 00 00", "00 03 0010" + rc16Usage},
		{"option 2: other service action", "a3 0c 02 9e 0011 00000200 00 00", notSupported},
		{"option 2: unknown opcode", "a3 0c 02 93 0000 00000200 00 00", notSupported},
		{"option 3: opcode without service action", "a3 0c 03 12 1234 00000200 00 00", "00 03 0006" + inqUsage},
		{"option 3: opcode with service action", "a3 0c 03 a3 000c 00000200 00 00", "00 03 000c" + rsocUsage},
		{"option 3: wrong service action", "a3 0c 03 a3 000d 00000200 00 00", notSupported},
		{"option 3: unknown opcode", "a3 0c 03 41 0000 00000200 00 00", notSupported},
		{"RCTD", "a3 0c 82 9e 0010 00000200 00 00", "00 83 0010" + rc16Usage + "000a 00 00 0000001e 0000001e"},
		{"RCTD, not supported: no timeouts", "a3 0c 81 93 0000 00000200 00 00", notSupported},
		{"truncated to 5", "a3 0c 01 12 0000 00000005 00 00", "00 03 0006 12"},
		{"allocation length 0", "a3 0c 01 12 0000 00000000 00 00", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got := do(t, f.ReportSupportedOpCodes, tt.cdb, 512)
			wantGood(t, r)
			wantBytes(t, got, tt.want)
		})
	}
}

func TestReportSupportedOpCodesErrors(t *testing.T) {
	f := newTape()
	for _, tt := range []struct {
		name, cdb, sense string
	}{
		{"option 1 for an opcode with service actions", "a3 0c 01 9e 0000 00000200 00 00", invalidCDB(2, 2)},
		{"option 2 for an opcode without service actions", "a3 0c 02 12 0000 00000200 00 00", invalidCDB(2, 2)},
		{"reserved option 4", "a3 0c 04 12 0000 00000200 00 00", invalidCDB(2, 2)},
		{"reserved option 7", "a3 0c 07 12 0000 00000200 00 00", invalidCDB(2, 2)},
		{"other MAINTENANCE IN service action", "a3 0d 00 00 0000 00000200 00 00", invalidCDB(1, 4)},
		{"short CDB", "a3", invalidCDB(1, 4)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, got := do(t, f.ReportSupportedOpCodes, tt.cdb, 512)
			wantSense(t, r, tt.sense)
			if len(got) != 0 {
				t.Errorf("data with CHECK CONDITION: % x", got)
			}
		})
	}
}

func TestWriteParameterData(t *testing.T) {
	p := []byte("0123456789")
	for _, tt := range []struct {
		alloc, buf, want int
	}{
		{0, 20, 0}, {-1, 20, 0}, {5, 20, 5}, {10, 20, 10}, {100, 20, 10}, {100, 3, 3},
	} {
		b := scsi.NewBuffer(make([]byte, tt.buf))
		if n := scsi.WriteParameterData(b, p, tt.alloc); n != tt.want || b.Written() != tt.want {
			t.Errorf("alloc %d buf %d: wrote %d (Written %d), want %d", tt.alloc, tt.buf, n, b.Written(), tt.want)
		}
	}
	if n := scsi.WriteParameterData(nil, p, 10); n != 0 {
		t.Errorf("nil buffer: %d", n)
	}
}

func TestSPCResponseHelpers(t *testing.T) {
	s := &scsi.SPC{SenseFormat: scsi.DescriptorFormat}
	if r := s.ResponseFor(nil); r != scsi.Good {
		t.Errorf("ResponseFor(nil) = %+v", r)
	}
	r := s.ResponseFor(scsi.ErrLBAOutOfRange)
	wantSense(t, r, "72 05 21 00 000000 00")
	r = s.CheckCondition(scsi.Sense{Key: scsi.NotReady, ASC: scsi.MediumNotPresent, Format: scsi.FixedFormat})
	wantSense(t, r, "72 02 3a 00 000000 00")
	if scsi.ErrLBAOutOfRange.Sense.Format != scsi.FixedFormat {
		t.Error("ResponseFor changed the shared error value")
	}
}

func TestSPCDoesNotAllocate(t *testing.T) {
	f := newTape()
	buf := scsi.NewBuffer(make([]byte, 4096))
	cmd := &scsi.Command{Data: buf}
	for _, tt := range []struct {
		name string
		fn   func(*scsi.Command) scsi.Response
		cdb  string
	}{
		{"inquiry", f.Inquiry, "12 00 00 00ff 00"},
		{"vpd 83", f.Inquiry, "12 01 83 00ff 00"},
		{"vpd 00", f.Inquiry, "12 01 00 00ff 00"},
		{"mode sense all", f.ModeSense, "5a 00 3f ff 00 00 00 ffff 00"},
		{"rsoc all", f.ReportSupportedOpCodes, "a3 0c 80 00 0000 00001000 00 00"},
		{"rsoc one", f.ReportSupportedOpCodes, "a3 0c 01 12 0000 00000200 00 00"},
	} {
		cmd.CDB = hx(tt.cdb)
		seg := [][]byte{make([]byte, 4096)}
		n := testing.AllocsPerRun(100, func() {
			buf.Reset(seg)
			tt.fn(cmd)
		})
		if n != 0 {
			t.Errorf("%s: %v allocs per command", tt.name, n)
		}
	}
	withDump(f.SPC)
	for _, tt := range []struct {
		name       string
		fn         func(*scsi.Command) scsi.Response
		cdb, param string
	}{
		{"mode select", f.ModeSelect, "15 10 00 00 1c 00", "00 00 00 08" + blockDesc + compPage},
		{"send diagnostic", f.SendDiagnostic, "1d 10 00 0008 00", forceDump},
	} {
		seg := [][]byte{hx(tt.param)}
		cmd.CDB = hx(tt.cdb)
		if n := testing.AllocsPerRun(100, func() {
			buf.Reset(seg)
			if r := tt.fn(cmd); r.Status != scsi.StatusGood {
				t.Fatalf("%s failed", tt.name)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocs per command", tt.name, n)
		}
	}
	cmd.CDB = hx("00 00 00 00 00 00")
	if n := testing.AllocsPerRun(100, func() { f.TakeUnitAttention(cmd) }); n != 0 {
		t.Errorf("TakeUnitAttention: %v allocs", n)
	}
}
