package tape

import (
	"errors"
	"fmt"
)

// A Snapshot is the part of a drive's state that a clean daemon restart
// keeps: the cartridge, where it was and the block size st had set. A
// crash keeps none of it but the cartridge (the daemon's caller decides:
// see cmd/vscsid's drive state), which is what a power cycle does to a
// real drive.
type Snapshot struct {
	Barcode   string `json:"barcode"`
	Partition int    `json:"partition"`
	Object    uint64 `json:"object"`    // logical object number (READ POSITION's block)
	BlockSize uint32 `json:"blocksize"` // 0 = variable-block mode
}

// ClosedState returns the drive's state as Close found it, after the last
// command and before it ejected the cartridge; ok is false when the drive
// is not closed or was empty when it closed.
func (d *Drive) ClosedState() (s Snapshot, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closedState, d.closed && d.closedState.Barcode != ""
}

// snapshot records the state Close leaves; called with d.mu held.
func (d *Drive) snapshot() {
	p := d.med.Pos()
	d.closedState = Snapshot{Barcode: d.barcode, Partition: p.Partition, Object: p.Object, BlockSize: d.mode.blockSize}
}

// ErrSnapshotMismatch means Resume was given the state of another cartridge.
var ErrSnapshotMismatch = errors.New("snapshot is of another cartridge")

// Resume puts a freshly loaded drive back into the state s, taken by
// ClosedState before a restart: it sets the block size and moves the
// cartridge to s's partition and logical object. Call it before the drive
// serves its first command. The unit attentions of the power on (29/00)
// and the load (28/00) stay queued, so st treats the drive as reset and
// the application may reposition; one that does not (st before
// position_lost_in_reset) finds the tape where it left it. On an error
// the drive is left at the beginning of partition 0 in the configured
// block size, as after a plain load.
func (d *Drive) Resume(s Snapshot) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state != stateReady || d.med == nil {
		return fmt.Errorf("vtape %s: resume: %w", d.name, ErrNoMedium)
	}
	if s.Barcode != d.barcode {
		return fmt.Errorf("vtape %s: resume %s with %s loaded: %w", d.name, s.Barcode, d.barcode, ErrSnapshotMismatch)
	}
	if s.BlockSize != 0 && (s.BlockSize < d.cfg.MinBlock || s.BlockSize > d.cfg.MaxBlock) {
		return fmt.Errorf("vtape %s: resume: block size %d outside the drive's limits %d..%d", d.name, s.BlockSize, d.cfg.MinBlock, d.cfg.MaxBlock)
	}
	if s.Partition < 0 || s.Partition >= d.info.Partitions {
		return fmt.Errorf("vtape %s: resume: partition %d of a cartridge with %d", d.name, s.Partition, d.info.Partitions)
	}
	err := d.med.Locate(s.Partition, s.Object)
	if errors.Is(err, ErrEndOfData) && d.med.Pos().Object == s.Object {
		err = nil // the position was end of data, as it often is after writing
	}
	if err == nil && d.med.Pos().Object != s.Object {
		err = fmt.Errorf("landed at object %d", d.med.Pos().Object)
	}
	if err != nil {
		if rerr := d.med.Locate(0, 0); rerr != nil && !errors.Is(rerr, ErrEndOfData) {
			err = errors.Join(err, rerr)
		}
		d.notePos()
		return fmt.Errorf("vtape %s: resume at partition %d object %d: %w", d.name, s.Partition, s.Object, err)
	}
	d.mode.blockSize = s.BlockSize
	d.notePos()
	return nil
}
