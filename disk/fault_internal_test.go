package disk

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vscsid/vscsid/scsi"
)

// failing is a backend whose every operation fails, standing in for an
// image file on a dying disk.
type failing struct{}

var errDead = errors.New("input/output error")

func (failing) ReadAt([]byte, int64) (int, error)  { return 0, errDead }
func (failing) WriteAt([]byte, int64) (int, error) { return 0, errDead }
func (failing) Flush() error                       { return errDead }

// A backend failure is a device fault: MEDIUM ERROR with the read or write
// ASC, logged at Error exactly once per disk however often it happens.
func TestBackendFaultIsMediumErrorLoggedOnce(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	cfg, _ := ParseConfig("size=1M;mode=store")
	d, err := New("sick", cfg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	d.UA.Clear()
	d.backend, d.flusher, d.zeroer = failing{}, failing{}, nil
	do := func(cdb []byte, n int) scsi.Response {
		return d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, n))})
	}
	read := []byte{0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0}
	write := []byte{0x2a, 0x08, 0, 0, 0, 0, 0, 0, 1, 0} // FUA
	for range 3 {
		if r := do(read, 512); r.Sense.Key != scsi.MediumError || r.Sense.ASC != scsi.UnrecoveredReadError {
			t.Fatalf("read: %+v, want MEDIUM ERROR 11/00", r)
		}
		if r := do(write, 512); r.Sense.Key != scsi.MediumError || r.Sense.ASC != scsi.WriteError {
			t.Fatalf("write: %+v, want MEDIUM ERROR 0C/00", r)
		}
		if r := do([]byte{0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0); r.Sense.Key != scsi.MediumError {
			t.Fatalf("synchronize cache: %+v, want MEDIUM ERROR", r)
		}
		// WRITE SAME of zeros without a Zeroer writes zero blocks.
		if r := do([]byte{0x41, 0, 0, 0, 0, 0, 0, 0, 4, 0}, 512); r.Sense.Key != scsi.MediumError {
			t.Fatalf("write same: %+v, want MEDIUM ERROR", r)
		}
	}
	if logs.Len() != 1 {
		t.Fatalf("%d error logs, want exactly 1: %v", logs.Len(), logs.All())
	}
}
