package fault_test

import (
	"context"
	"testing"
	"time"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target/targettest"
)

// recorder is a Handler that records the CDBs it runs and answers GOOD,
// producing the Data-In a READ asks for (512-byte blocks of the LBA's low
// byte) and consuming all Data-Out.
type recorder struct {
	calls []scsi.CDB
	resp  scsi.Response
	names map[scsi.OpCode]string
	onCmd func(scsi.CDB) // called for every command
	// position, for the Positioner variant
	part         int
	object, file uint64
}

// The command tables of the three kinds, for Options.Commands.
var (
	diskCmds    scsi.CommandTable = disk.Commands()
	tapeCmds    scsi.CommandTable = tape.Commands()
	changerCmds scsi.CommandTable = changer.Commands()
)

// The CDB builders shared with the other handler tests.
var (
	rw10 = targettest.RW10
	rw12 = targettest.RW12
	rw16 = targettest.RW16
)

func (r *recorder) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	r.calls = append(r.calls, append(scsi.CDB(nil), cmd.CDB...))
	if r.onCmd != nil {
		r.onCmd(cmd.CDB)
	}
	if cmd.Data == nil || r.resp.Status != scsi.StatusGood {
		return r.resp
	}
	switch cmd.CDB.OpCode() {
	case scsi.Read10: // 512-byte blocks filled with the LBA's low byte
		if len(cmd.CDB) >= 10 {
			blk := make([]byte, 512)
			for i := range int(cmd.CDB.Uint16(7)) {
				for j := range blk {
					blk[j] = byte(int(cmd.CDB.Uint32(2)) + i)
				}
				_, _ = cmd.Data.Write(blk)
			}
		}
	case scsi.Read6, scsi.Read12, scsi.Read16:
		cmd.Data.WriteZeros(cmd.Data.Len())
	case scsi.Write6, scsi.Write10, scsi.Write12, scsi.Write16:
		cmd.Data.Discard(cmd.Data.Len())
	}
	return r.resp
}

// CommandID and CommandName make the recorder a scsi.CommandNamer whose
// commands are its opcodes.
func (r *recorder) CommandID(cdb scsi.CDB) scsi.CommandID { return scsi.CommandID(cdb.OpCode()) }

func (r *recorder) CommandName(id scsi.CommandID) string {
	if id > 255 {
		return ""
	}
	return r.names[scsi.OpCode(id)]
}

// positioned is a recorder that reports a tape position.
type positioned struct{ recorder }

// compressing is a positioned tape whose every data command moves ratio
// times fewer bytes on the medium than over the wire.
type compressing struct {
	positioned
	ratio  uint64
	medium uint64
}

func (c *compressing) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	r := c.positioned.HandleCommand(ctx, cmd)
	if cmd.Data != nil {
		c.medium += uint64(cmd.Data.Written()+cmd.Data.Consumed()) / c.ratio
	}
	return r
}

func (c *compressing) MediumBytes() uint64 { return c.medium }

func (p *positioned) Position() (int, uint64, uint64) { return p.part, p.object, p.file }

// fakeClock advances only when slept on (or by the test).
type fakeClock struct {
	now    time.Duration
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Duration { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.sleeps = append(c.sleeps, d)
	c.now += d
	return nil
}

// slept returns the sleeps since the last call.
func (c *fakeClock) take() []time.Duration {
	s := c.sleeps
	c.sleeps = nil
	return s
}

func newDevice(t testing.TB, h fault.Handler, o fault.Options, rules ...string) *fault.Device {
	t.Helper()
	for _, s := range rules {
		r, err := fault.ParseRule(s)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", s, err)
		}
		o.Rules = append(o.Rules, r)
	}
	if o.Commands == nil {
		o.Commands = diskCmds // the default of these tests: a disk
	}
	d, err := fault.New(h, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}

// run sends one command with a buffer of n bytes.
func run(d fault.Handler, cdb []byte, n int) (scsi.Response, *scsi.Buffer) {
	buf := scsi.NewBuffer(make([]byte, n))
	r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: buf})
	return r, buf
}

// CDB builders.

func read6(lba uint32, n uint8) []byte {
	return []byte{0x08, byte(lba >> 16 & 0x1f), byte(lba >> 8), byte(lba), n, 0}
}

// tape6 builds a tape READ(6)/WRITE(6)/VERIFY(6)/WRITE FILEMARKS(6) CDB.
func tape6(op byte, fixed bool, n uint32) []byte {
	c := []byte{op, 0, byte(n >> 16), byte(n >> 8), byte(n), 0}
	if fixed {
		c[1] = 1
	}
	return c
}

var tur = []byte{0, 0, 0, 0, 0, 0}
