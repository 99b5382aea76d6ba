package tape

import (
	"testing"
)

// The commands LTFS's IBM (sg) backend sends, byte for byte, and what it
// expects back.

// TestLTFSForcedDump: after an error LTFS forces a dump (SEND DIAGNOSTIC
// PF=1, page 80h diagnostic ID 0160h) and reads it back with READ BUFFER
// of buffer 01h (descriptor, then data); none of it may fail, or the dump
// recurses on its own errors.
func TestLTFSForcedDump(t *testing.T) {
	h := newHarness(t, "personality=lto6")
	h.ok(cdb(0x1d, 0x10, 0, 0, 0x08, 0), hexBytes("80 00 0004 0160 0000"), 0)
	in := h.ok(cdb(0x3c, 0x03, 0x01, 0, 0, 0, 0, 0, 4, 0), nil, 4)
	wantBytes(t, "dump descriptor", in, hexBytes("00 100000"))
	in = h.ok(cdb(0x3c, 0x02, 0x01, 0, 0, 0, 0x08, 0, 0, 0), nil, 512<<10)
	if len(in) != 512<<10 {
		t.Fatalf("dump data: %d bytes", len(in))
	}
	// Another diagnostic ID is refused at its byte.
	s, _ := h.fail(cdb(0x1d, 0x10, 0, 0, 0x08, 0), hexBytes("80 00 0004 0161 0000"), 0)
	if want := "700005000000000a00000000260000800004"; s != want {
		t.Fatalf("diagnostic 0161h: sense %s, want %s", s, want)
	}
	// The self-tests pass without a cartridge.
	h.ok(cdb(0x1b, 0, 0, 0, 0, 0), nil, 0) // unload
	h.ok(cdb(0x1d, 0x04, 0, 0, 0, 0), nil, 0)
}

// TestSendDiagnosticModels: the IBM vendor page exists on the IBM models
// only; every model lists SEND DIAGNOSTIC in REPORT SUPPORTED OPERATION
// CODES.
func TestSendDiagnosticModels(t *testing.T) {
	for _, tt := range []struct {
		model string
		dump  bool
	}{{"lto5", true}, {"lto9", true}, {"hp-lto8", false}, {"generic", false}, {"dat72", false}} {
		h := newHarness(t, "personality="+tt.model)
		r, _ := h.do(cdb(0x1d, 0x10, 0, 0, 0x08, 0), hexBytes("80 00 0004 0160 0000"), 0)
		if got := r.Status == 0; got != tt.dump {
			t.Errorf("%s: forced dump accepted %v, want %v", tt.model, got, tt.dump)
		}
		in := h.ok(cdb(0xa3, 0x0c, 0x01, 0x1d, 0, 0, 0, 0, 1, 0, 0, 0), nil, 256)
		wantBytes(t, tt.model+" rsoc 1dh", in, hexBytes("00 03 0006 1d f7 00 ffff 07"))
	}
}
