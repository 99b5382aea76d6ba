package scsi_test

import (
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// newDisk is a disk-shaped SPC for fuzzing: long LBA block descriptors and
// a SelectBlockDescriptor that checks the block length.
func newDisk() *scsi.SPC {
	s := &scsi.SPC{Identity: scsi.Identity{Vendor: "LIO-ORG", Product: "vdisk", CmdQue: true, NAA: scsi.NAARegistered(0x001405, 7)}}
	ie := &scsi.InformationalExceptions{}
	s.Modes = scsi.ModePages{
		Pages:          []scsi.ModePage{s.ControlModePage(), ie.ModePage()},
		DeviceSpecific: func() uint8 { return 0x10 },
		BlockDescriptor: func(b []byte, long bool) []byte {
			if long {
				return append(b, hx("0000000000100000 00000000 00000200")...)
			}
			return append(b, hx("00100000 00 000200")...)
		},
		SelectBlockDescriptor: func(d []byte, long bool) error {
			if (long && len(d) != 16) || (!long && len(d) != 8) {
				panic("SelectBlockDescriptor got a descriptor of the wrong size")
			}
			if d[len(d)-1] != 0 || d[len(d)-2] != 2 {
				return scsi.InvalidParameter(len(d)-3, -1)
			}
			return nil
		},
	}
	s.Commands = []scsi.CommandInfo{
		{OpCode: scsi.Read10, Usage: hx("28 fe ffffffff 3f ffff 07"), Timeout: 30},
		{OpCode: scsi.ServiceActionIn16, ServiceAction: 0x10, HasSA: true, Usage: hx(rc16Usage)},
	}
	s.UA.Add(scsi.PowerOnResetOrBusDeviceReset)
	return s
}

// fuzzSeeds are CDBs (with parameter data for MODE SELECT) that reach
// every branch of the SPC methods.
var fuzzSeeds = []struct{ cdb, param string }{
	{"12 00 00 00ff 00", ""},
	{"12 01 00 00ff 00", ""},
	{"12 01 80 00ff 00", ""},
	{"12 01 83 00ff 00", ""},
	{"12 01 b1 0005 00", ""},
	{"12 02 00 00ff 00", ""},
	{"03 01 00 00 fc 00", ""},
	{"1a 00 00 00 0c 00", ""},
	{"1a 08 3f ff ff 00", ""},
	{"5a 10 3f ff 00 00 00 ffff 00", ""},
	{"5a 00 ca 00 00 00 00 00 ff 00", ""},
	{"15 10 00 00 10 00", "00 00 00 00" + controlDSense},
	{"15 10 00 00 0c 00", "00 00 10 08 40 000000 00 000400"},
	{"55 10 00 00 00 00 00 0018 00", "0000 00 10 01 00 0010 0000000000100000 00000000 00000200"},
	{"55 10 00 00 00 00 00 0028 00", "0000 00 00 00 00 0000" + ctlExtPage},
	{"15 10 00 00 2c 00", "00 00 00 00 8f 0e c0 80 00000001 00000001 00000000" + controlPage + iePage},
	{"a3 0c 80 00 0000 00001000 00 00", ""},
	{"a3 0c 01 12 0000 00000200 00 00", ""},
	{"a3 0c 83 9e 0010 00000200 00 00", ""},
	{"1d 04 00 0000 00", ""},
	{"1d a0 00 0000 00", ""},
	{"1d 20 00 0000 00", ""},
	{"1d 10 00 0008 00", forceDump},
	{"1d 10 00 0008 00", "80 00 0005 0160 0000"},
}

// FuzzSPC runs random CDBs and parameter data through every SPC method of
// a tape-shaped and a disk-shaped unit with a Data buffer of random size and
// segmentation. Nothing may panic, Written() never exceeds Len(), a CHECK
// CONDITION carries well-formed sense data and no Data-In, and a status is
// GOOD or CHECK CONDITION.
func FuzzSPC(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(hx(s.cdb), hx(s.param), uint16(512), uint8(0))
		f.Add(hx(s.cdb), hx(s.param), uint16(13), uint8(3))
	}
	f.Fuzz(func(t *testing.T, cdb, param []byte, size uint16, split uint8) {
		tape := newTape()
		withDump(tape.SPC)
		units := []*scsi.SPC{tape.SPC, newDisk()}
		size %= 8192
		for _, s := range units {
			methods := []func(*scsi.Command) scsi.Response{
				s.Inquiry, s.ModeSense, s.ModeSelect, s.ReportSupportedOpCodes, s.SendDiagnostic,
				func(c *scsi.Command) scsi.Response {
					cur, _ := scsi.ParseSense(param)
					return s.RequestSense(c, cur)
				},
				func(c *scsi.Command) scsi.Response {
					r, _ := s.TakeUnitAttention(c)
					return r
				},
			}
			for _, m := range methods {
				mem := make([]byte, size)
				copy(mem, param)
				var segs [][]byte
				for rest, n := mem, int(split%16)+1; len(rest) > 0; {
					l := min(len(rest), len(mem)/n+1)
					segs, rest = append(segs, rest[:l]), rest[l:]
				}
				buf := scsi.NewBuffer(segs...)
				r := m(&scsi.Command{CDB: cdb, Data: buf})
				if buf.Written() > buf.Len() {
					t.Fatalf("Written %d > Len %d", buf.Written(), buf.Len())
				}
				switch r.Status {
				case scsi.StatusGood:
				case scsi.StatusCheckCondition:
					if buf.Written() != 0 {
						t.Fatalf("CHECK CONDITION with %d bytes of data", buf.Written())
					}
					sense := r.Sense.Append(nil)
					if r.Sense.Format != s.SenseFormat {
						t.Fatalf("sense format %d, unit uses %d", r.Sense.Format, s.SenseFormat)
					}
					if r.Sense.Key == scsi.NoSense || len(sense) > scsi.SenseBufferSize {
						t.Fatalf("bad sense % x", sense)
					}
					if _, err := scsi.ParseSense(sense); err != nil {
						t.Fatalf("sense % x does not parse: %v", sense, err)
					}
				default:
					t.Fatalf("status %v", r.Status)
				}
			}
		}
	})
}
