package scsi_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// hx decodes a hex string with optional spaces and "|" separators.
func hx(s string) []byte {
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// Golden sense data. Fixed: SPC-5 4.4.3 table 47; descriptor: SPC-5
// 4.4.2 with the information (type 0), sense-key-specific (type 2) and
// stream commands (type 4, SSC-5) descriptors.
var senseGolden = []struct {
	name       string
	s          scsi.Sense
	fixed      string
	descriptor string
}{
	{
		name:       "no sense",
		s:          scsi.Sense{},
		fixed:      "70 00 00 00000000 0a 00000000 00 00 00 000000",
		descriptor: "72 00 00 00 000000 00",
	},
	{
		name:       "ILI, block shorter than requested (positive residue 512)",
		s:          scsi.Sense{Key: scsi.NoSense, ILI: true, Valid: true, Info: 512},
		fixed:      "f0 00 20 00000200 0a 00000000 00 00 00 000000",
		descriptor: "72 00 00 00 000000 10 | 00 0a 80 00 0000000000000200 | 04 02 00 20",
	},
	{
		name:       "ILI, block longer than requested (negative residue -1024)",
		s:          scsi.Sense{Key: scsi.NoSense, ILI: true, Valid: true, Info: -1024},
		fixed:      "f0 00 20 fffffc00 0a 00000000 00 00 00 000000",
		descriptor: "72 00 00 00 000000 10 | 00 0a 80 00 fffffffffffffc00 | 04 02 00 20",
	},
	{
		name:       "filemark detected, residue 1",
		s:          scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Filemark: true, Valid: true, Info: 1},
		fixed:      "f0 00 80 00000001 0a 00000000 00 01 00 000000",
		descriptor: "72 00 00 01 000000 10 | 00 0a 80 00 0000000000000001 | 04 02 00 80",
	},
	{
		name:       "EOM early warning on write, residue 0",
		s:          scsi.Sense{Key: scsi.NoSense, ASC: scsi.EndOfPartitionMediumDetected, EOM: true, Valid: true},
		fixed:      "f0 00 40 00000000 0a 00000000 00 02 00 000000",
		descriptor: "72 00 00 02 000000 10 | 00 0a 80 00 0000000000000000 | 04 02 00 40",
	},
	{
		name:       "BLANK CHECK, end of data, residue 5",
		s:          scsi.Sense{Key: scsi.BlankCheck, ASC: scsi.EndOfDataDetected, Valid: true, Info: 5},
		fixed:      "f0 00 08 00000005 0a 00000000 00 05 00 000000",
		descriptor: "72 08 00 05 000000 0c | 00 0a 80 00 0000000000000005",
	},
	{
		name:       "VOLUME OVERFLOW at EOM",
		s:          scsi.Sense{Key: scsi.VolumeOverflow, ASC: scsi.EndOfPartitionMediumDetected, EOM: true, Valid: true, Info: 3},
		fixed:      "f0 00 4d 00000003 0a 00000000 00 02 00 000000",
		descriptor: "72 0d 00 02 000000 10 | 00 0a 80 00 0000000000000003 | 04 02 00 40",
	},
	{
		name:       "invalid field in CDB, byte 4 bit 1",
		s:          scsi.InvalidField(4, 1).Sense,
		fixed:      "70 00 05 00000000 0a 00000000 24 00 00 c9 0004",
		descriptor: "72 05 24 00 000000 08 | 02 06 00 00 c9 0004 00",
	},
	{
		name:       "invalid field in CDB, byte 2, no bit",
		s:          scsi.InvalidField(2, -1).Sense,
		fixed:      "70 00 05 00000000 0a 00000000 24 00 00 c0 0002",
		descriptor: "72 05 24 00 000000 08 | 02 06 00 00 c0 0002 00",
	},
	{
		name:       "invalid field in parameter list, byte 300 bit 7",
		s:          scsi.InvalidParameter(300, 7).Sense,
		fixed:      "70 00 05 00000000 0a 00000000 26 00 00 8f 012c",
		descriptor: "72 05 26 00 000000 08 | 02 06 00 00 8f 012c 00",
	},
	{
		name:       "deferred medium error",
		s:          scsi.Sense{Key: scsi.MediumError, ASC: scsi.WriteError, Deferred: true},
		fixed:      "71 00 03 00000000 0a 00000000 0c 00 00 000000",
		descriptor: "73 03 0c 00 000000 00",
	},
	{
		name:       "unit attention, INFORMATION not valid is zeroed",
		s:          scsi.Sense{Key: scsi.UnitAttention, ASC: scsi.NotReadyToReadyChange, Info: 77},
		fixed:      "70 00 06 00000000 0a 00000000 28 00 00 000000",
		descriptor: "72 06 28 00 000000 00",
	},
	{
		name:       "LBA above 32 bits: fixed format clears VALID",
		s:          scsi.Sense{Key: scsi.MediumError, ASC: scsi.UnrecoveredReadError, Valid: true, Info: 0x1_0000_0000},
		fixed:      "70 00 03 00000000 0a 00000000 11 00 00 000000",
		descriptor: "72 03 11 00 000000 0c | 00 0a 80 00 0000000100000000",
	},
	{
		name:       "LBA 0xfffffffe fits unsigned 32 bits",
		s:          scsi.Sense{Key: scsi.MediumError, ASC: scsi.UnrecoveredReadError, Valid: true, Info: 0xfffffffe},
		fixed:      "f0 00 03 fffffffe 0a 00000000 11 00 00 000000",
		descriptor: "72 03 11 00 000000 0c | 00 0a 80 00 00000000fffffffe",
	},
	{
		name: "everything",
		s: scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Valid: true, Info: -2,
			Filemark: true, EOM: true, ILI: true, Pointer: scsi.FieldPointer{Valid: true, CDB: true, BitValid: true, Bit: 7, Field: 0x1234}},
		fixed:      "f0 00 e0 fffffffe 0a 00000000 00 01 00 cf 1234",
		descriptor: "72 00 00 01 000000 18 | 00 0a 80 00 fffffffffffffffe | 02 06 00 00 cf 1234 00 | 04 02 00 e0",
	},
}

func TestSenseGolden(t *testing.T) {
	for _, tt := range senseGolden {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte{0xaa}
			got := tt.s.AppendFixed(prefix)
			if want := hx(tt.fixed); string(got[1:]) != string(want) || got[0] != 0xaa {
				t.Errorf("AppendFixed:\n got % x\nwant % x", got[1:], want)
			}
			got = tt.s.AppendDescriptor(prefix[:1:1])
			if want := hx(tt.descriptor); string(got[1:]) != string(want) {
				t.Errorf("AppendDescriptor:\n got % x\nwant % x", got[1:], want)
			}
			// Append follows Format.
			s := tt.s
			s.Format = scsi.DescriptorFormat
			if got := s.Append(nil); string(got) != string(hx(tt.descriptor)) {
				t.Errorf("Append with DescriptorFormat: % x", got)
			}
			s.Format = scsi.FixedFormat
			if got := s.Append(nil); string(got) != string(hx(tt.fixed)) {
				t.Errorf("Append with FixedFormat: % x", got)
			}
		})
	}
}

func TestParseSenseGolden(t *testing.T) {
	for _, tt := range senseGolden {
		t.Run(tt.name, func(t *testing.T) {
			for _, form := range []struct {
				name   string
				format scsi.SenseFormat
				data   string
			}{{"fixed", scsi.FixedFormat, tt.fixed}, {"descriptor", scsi.DescriptorFormat, tt.descriptor}} {
				got, err := scsi.ParseSense(hx(form.data))
				if err != nil {
					t.Fatalf("%s: %v", form.name, err)
				}
				want := tt.s
				want.Format = form.format
				if !want.Valid {
					want.Info = 0
				}
				if form.format == scsi.FixedFormat && want.Valid && (want.Info > 0xffffffff || want.Info < -1<<31) {
					want.Valid, want.Info = false, 0 // not representable in 4 bytes
				}
				if form.format == scsi.FixedFormat && want.Info > 0x7fffffff {
					want.Info = int64(int32(uint32(want.Info))) // fixed INFORMATION is sign-extended
				}
				if got != want {
					t.Errorf("%s: ParseSense =\n %+v\nwant\n %+v", form.name, got, want)
				}
			}
		})
	}
}

func TestParseSenseErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
	}{
		{"empty", ""},
		{"bad response code", "7f 00 05 00"},
		{"vendor response code", "7e 00 05 00 00 00 00 00"},
		{"fixed shorter than header", "70 00 05 00 00 00 00"},
		{"descriptor shorter than header", "72 05 24 00"},
		{"descriptor header truncated", "72 05 24 00 000000 01 | 00"},
		{"descriptor body truncated", "72 05 24 00 000000 08 | 02 06 00 00 c0 00"},
		{"information descriptor wrong length", "72 05 24 00 000000 06 | 00 04 80 00 0000"},
		{"sense key specific descriptor wrong length", "72 05 24 00 000000 06 | 02 04 00 00 c0 00"},
		{"stream commands descriptor wrong length", "72 05 24 00 000000 03 | 04 01 00"},
	} {
		if s, err := scsi.ParseSense(hx(tt.in)); err == nil {
			t.Errorf("%s: ParseSense(%s) = %+v, want an error", tt.name, tt.in, s)
		}
	}
}

func TestParseSenseLenient(t *testing.T) {
	// Short fixed data (ADDITIONAL SENSE LENGTH 6): no ASC, parsed anyway.
	s, err := scsi.ParseSense(hx("70 00 02 00000000 06 00000000 3a 00"))
	if err != nil || s.Key != scsi.NotReady || s.ASC != 0x3a00 {
		t.Errorf("short fixed: %+v %v", s, err)
	}
	// Fixed data cut below the ASC: key only.
	s, err = scsi.ParseSense(hx("70 00 02 00000000 0a 00"))
	if err != nil || s.Key != scsi.NotReady || s.ASC != 0 {
		t.Errorf("truncated fixed: %+v %v", s, err)
	}
	// Bytes past the additional length (a 96-byte TCMU buffer) are ignored.
	b := make([]byte, scsi.SenseBufferSize)
	copy(b, hx("72 05 24 00 000000 08 | 02 06 00 00 c0 0002 00"))
	b[20] = 0xff
	s, err = scsi.ParseSense(b)
	if err != nil || !s.Pointer.Valid || s.Pointer.Field != 2 {
		t.Errorf("96-byte descriptor buffer: %+v %v", s, err)
	}
	// Unknown descriptor types are skipped.
	s, err = scsi.ParseSense(hx("72 00 00 01 000000 0a | 80 04 01020304 | 04 02 00 80"))
	if err != nil || !s.Filemark {
		t.Errorf("vendor descriptor: %+v %v", s, err)
	}
}

// FuzzParseSense: any bytes give an error or a Sense that re-encodes, in
// the same format, to data that parses back to the same Sense.
func FuzzParseSense(f *testing.F) {
	for _, tt := range senseGolden {
		f.Add(hx(tt.fixed))
		f.Add(hx(tt.descriptor))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := scsi.ParseSense(b)
		if err != nil {
			return
		}
		enc := s.Append(nil)
		if len(enc) > scsi.SenseBufferSize {
			t.Fatalf("%d bytes of sense data", len(enc))
		}
		again, err := scsi.ParseSense(enc)
		if err != nil {
			t.Fatalf("re-encoded % x does not parse: %v", enc, err)
		}
		if again != s {
			t.Fatalf("round trip of % x:\n %+v\n %+v", b, s, again)
		}
	})
}

func TestSenseAppendFixedDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, scsi.SenseBufferSize)
	s := scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Filemark: true, Valid: true, Info: 1}
	if n := testing.AllocsPerRun(1000, func() { buf = s.AppendFixed(buf[:0]) }); n != 0 {
		t.Errorf("AppendFixed into a reused buffer: %v allocs", n)
	}
	if n := testing.AllocsPerRun(1000, func() { buf = s.AppendDescriptor(buf[:0]) }); n != 0 {
		t.Errorf("AppendDescriptor into a reused buffer: %v allocs", n)
	}
}

func BenchmarkSenseAppendFixed(b *testing.B) {
	buf := make([]byte, 0, scsi.SenseBufferSize)
	s := scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Filemark: true, Valid: true, Info: 1}
	b.ReportAllocs()
	for b.Loop() {
		buf = s.AppendFixed(buf[:0])
	}
}

func BenchmarkSenseAppendDescriptor(b *testing.B) {
	buf := make([]byte, 0, scsi.SenseBufferSize)
	s := scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Filemark: true, Valid: true, Info: 1}
	b.ReportAllocs()
	for b.Loop() {
		buf = s.AppendDescriptor(buf[:0])
	}
}

// SenseOf finds an *Error however it is wrapped; ResponseFor converts
// through it, without allocating for an *Error or a %w of one, and
// WithFormat is the one place the sense format is set.
func TestSenseOfAndResponseFor(t *testing.T) {
	own := &scsi.Error{Sense: scsi.Sense{Key: scsi.BlankCheck, ASC: scsi.EndOfDataDetected}, Msg: "tape: end of data"}
	if own.Error() != "tape: end of data" {
		t.Errorf("Msg not used: %q", own.Error())
	}
	wrapped := fmt.Errorf("read: %w", own)
	for _, err := range []error{own, wrapped, errors.Join(errors.New("other"), wrapped)} {
		s, ok := scsi.SenseOf(err)
		if !ok || s != own.Sense {
			t.Errorf("SenseOf(%v) = %+v, %v", err, s, ok)
		}
		if r := scsi.ResponseFor(err); r != scsi.CheckCondition(own.Sense) {
			t.Errorf("ResponseFor(%v) = %+v", err, r)
		}
	}
	if _, ok := scsi.SenseOf(errors.New("eio")); ok {
		t.Error("a plain error carries sense")
	}
	if r := scsi.ResponseFor(errors.New("eio")); r.Sense.Key != scsi.HardwareError || r.Sense.ASC != scsi.InternalTargetFailure {
		t.Errorf("plain error: %+v", r)
	}
	if r := scsi.ResponseFor(nil).WithFormat(scsi.DescriptorFormat); r != scsi.Good {
		t.Errorf("nil: %+v", r)
	}
	if r := scsi.ResponseFor(own).WithFormat(scsi.DescriptorFormat); r.Sense.Format != scsi.DescriptorFormat {
		t.Errorf("WithFormat: %+v", r)
	}
	if scsi.InvalidField(3, 2).Sense != scsi.InvalidFieldSense(3, 2) || scsi.InvalidParameter(4, -1).Sense != scsi.InvalidParameterSense(4, -1) {
		t.Error("InvalidField/InvalidParameter differ from their Sense forms")
	}
	if n := testing.AllocsPerRun(100, func() { _ = scsi.ResponseFor(wrapped); _ = scsi.InvalidFieldSense(1, 7) }); n != 0 {
		t.Errorf("ResponseFor of a wrapped *Error allocates %v times", n)
	}
}
