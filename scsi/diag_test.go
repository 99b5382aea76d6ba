package scsi_test

import (
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// forceDump is the parameter list of LTFS's forced drive dump: vendor
// diagnostic page 80h, page length 4, diagnostic ID 0160h.
const forceDump = "80 00 0004 0160 0000"

// withDump registers a page 80h that accepts diagnostic ID 0160h only.
func withDump(s *scsi.SPC) *int {
	n := new(int)
	s.Diagnostics = []scsi.DiagnosticPage{{Code: 0x80, Send: func(p []byte) error {
		if len(p) < 6 || p[4] != 0x01 || p[5] != 0x60 {
			return scsi.InvalidParameter(4, -1)
		}
		*n++
		return nil
	}}}
	return n
}

func TestSendDiagnosticSelfTests(t *testing.T) {
	f := newTape()
	for _, cdb := range []string{
		"1d 04 00 0000 00", // SELFTEST: the default self-test
		"1d 07 00 0000 00", // with DEVOFFL and UNITOFFL
		"1d 14 00 0000 00", // PF is ignored with SELFTEST
		"1d a0 00 0000 00", // foreground short
		"1d c0 00 0000 00", // foreground extended
		"1d 00 00 0000 00", // no self-test, no parameter list: nothing to do
		"1d 10 00 0000 00",
	} {
		wantGood(t, out(f.SendDiagnostic, cdb, nil))
	}
	for _, tt := range []struct{ cdb, sense string }{
		{"1d 24 00 0000 00", invalidCDB(1, 7)}, // a code with SELFTEST
		{"1d 20 00 0000 00", invalidCDB(1, 7)}, // background short: no results log page
		{"1d 40 00 0000 00", invalidCDB(1, 7)}, // background extended
		{"1d 80 00 0000 00", invalidCDB(1, 7)}, // abort: nothing in progress
		{"1d 60 00 0000 00", invalidCDB(1, 7)}, // reserved
		{"1d e0 00 0000 00", invalidCDB(1, 7)},
		{"1d 04 00 0008 00", invalidCDB(3, -1)}, // parameter list with a self-test
		{"1d a0 00 0008 00", invalidCDB(3, -1)},
		{"12 00 00 0000 00", "70 00 05 00000000 0a 00000000 20 00 00 000000"},
	} {
		wantSense(t, out(f.SendDiagnostic, tt.cdb, make([]byte, 8)), tt.sense)
	}
}

// With the results log page, the background self-tests run too, and every
// short or extended self-test is logged, most recent first.
func TestSelfTestLog(t *testing.T) {
	f := newTape()
	f.SelfTests.Reported = true
	for _, cdb := range []string{"1d 20 00 0000 00", "1d 04 00 0000 00", "1d c0 00 0000 00"} {
		wantGood(t, out(f.SendDiagnostic, cdb, nil))
	}
	b := f.SelfTests.AppendParams(nil, 0)
	if len(b) != 20*20 {
		t.Fatalf("%d bytes of parameters", len(b))
	}
	if b[4] != 0xc0 || b[24] != 0x20 || b[44] != 0 {
		t.Fatalf("codes % x, % x, % x", b[4], b[24], b[44])
	}
	if b := f.SelfTests.AppendParams(nil, 20); len(b) != 20 || b[1] != 20 {
		t.Fatalf("from parameter 0014h: % x", b)
	}
}

func TestSendDiagnosticPages(t *testing.T) {
	f := newTape()
	// No page registered: the forced dump is an unknown page.
	wantSense(t, out(f.SendDiagnostic, "1d 10 00 0008 00", hx(forceDump)), invalidParam(0, -1))
	n := withDump(f.SPC)
	wantGood(t, out(f.SendDiagnostic, "1d 10 00 0008 00", hx(forceDump)))
	if *n != 1 {
		t.Fatalf("page 80h performed %d times", *n)
	}
	for _, tt := range []struct{ cdb, param, sense string }{
		{"1d 00 00 0008 00", forceDump, invalidCDB(1, 4)},                  // PF=0: vendor format
		{"1d 10 00 0008 00", "80 00 0004 0161 0000", invalidParam(4, -1)},  // Send's pointer
		{"1d 10 00 0008 00", "81 00 0004 0160 0000", invalidParam(0, -1)},  // unknown page
		{"1d 10 00 0003 00", "80 00 00", paramListLengthError},             // shorter than a header
		{"1d 10 00 0008 00", "80 00 0005 0160 0000", paramListLengthError}, // page past the list
		{"1d 10 00 0010 00", forceDump, paramListLengthError},              // less Data-Out than the list
	} {
		wantSense(t, out(f.SendDiagnostic, tt.cdb, hx(tt.param)), tt.sense)
	}
	if *n != 1 {
		t.Fatalf("page 80h performed %d times", *n)
	}
	// A descriptor-format unit answers in its format.
	f.SenseFormat = scsi.DescriptorFormat
	if r := out(f.SendDiagnostic, "1d 20 00 0000 00", nil); r.Sense.Format != scsi.DescriptorFormat {
		t.Fatalf("sense format %v", r.Sense.Format)
	}
}
