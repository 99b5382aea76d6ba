package tape

import (
	"errors"
	"fmt"

	"github.com/vscsid/vscsid/scsi"
)

// A Snapshot is the part of a drive's state that a clean daemon restart
// keeps: the cartridge, where it was, the block size st had set and the
// rest of what the initiator chose (Mode). A crash keeps none of it but
// the cartridge (the daemon's caller decides: see cmd/vscsid's drive
// state), which is what a power cycle does to a real drive.
type Snapshot struct {
	Barcode   string `json:"barcode"`
	Partition int    `json:"partition"`
	Object    uint64 `json:"object"`    // logical object number (READ POSITION's block)
	BlockSize uint32 `json:"blocksize"` // 0 = variable-block mode
	// Mode is nil in a state saved by a vscsid before it kept the mode
	// parameters; such a resume reports the restart (see Resume).
	Mode *ModeSnapshot `json:"mode,omitempty"`
}

// ModeSnapshot is what MODE SELECT and PREVENT ALLOW MEDIUM REMOVAL set
// besides the block size: with it a resumed drive is the drive the
// initiator left. A pending partitioning (MODE SELECT of page 11h without
// the FORMAT MEDIUM that applies it) is not kept.
type ModeSnapshot struct {
	Density     uint8  `json:"density,omitempty"`
	Compression bool   `json:"compression"`
	RSMK        bool   `json:"rsmk,omitempty"`
	PEWS        uint16 `json:"pews,omitempty"` // MB
	DSense      bool   `json:"dsense,omitempty"`
	LBPMethod   uint8  `json:"lbp_method,omitempty"`
	LBPWrite    bool   `json:"lbp_write,omitempty"`
	LBPRead     bool   `json:"lbp_read,omitempty"`
	LBPRBDP     bool   `json:"lbp_rbdp,omitempty"`
	Prevent     bool   `json:"prevent,omitempty"` // medium removal prevented
	// EODControl is byte 8 of IBM page 25h on 3592 models (LTFS sets it).
	EODControl uint8 `json:"eod_control,omitempty"`
	// Encryption: data encryption parameters were set (the key is never
	// saved, so the resumed drive has none: see Resume).
	Encryption bool `json:"encryption,omitempty"`
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
	m := d.mode
	d.closedState = Snapshot{Barcode: d.barcode, Partition: p.Partition, Object: p.Object, BlockSize: m.blockSize,
		Mode: &ModeSnapshot{
			Density: m.density, Compression: m.compression, RSMK: m.rsmk, PEWS: m.pews, DSense: m.dsense, EODControl: m.eodControl,
			LBPMethod: m.lbp.method, LBPWrite: m.lbp.write, LBPRead: m.lbp.read, LBPRBDP: m.lbp.rbdp,
			Prevent: d.prevent, Encryption: d.crypt.encMode != encDisable || d.crypt.decMode != decDisable,
		}}
}

// ErrSnapshotMismatch means Resume was given the state of another cartridge.
var ErrSnapshotMismatch = errors.New("snapshot is of another cartridge")

// Resume puts a freshly loaded drive back into the state s, taken by
// ClosedState before a restart: it moves the cartridge to s's partition
// and logical object and sets the block size and s.Mode. Call it before
// the drive serves its first command.
//
// With s.Mode the drive is then exactly the one the initiator left, and a
// clean restart is nothing the initiator needs to know about: Resume drops
// the unit attentions of the power on (29/00) and the load (28/00), so a
// tar or dd streaming through st across "systemctl restart" (or a package
// upgrade) only waits, and st does not mark its position lost
// (position_lost_in_reset would refuse the stream's next write). Without
// s.Mode (a state saved before vscsid kept it) the drive cannot be the
// same, and both unit attentions stay queued: st then treats the drive as
// reset. On an error the drive is left at the beginning of partition 0 in
// the configured block size, with both unit attentions, as after a plain
// load.
//
// Encryption is the exception to a silent restart: the key lived in the
// old drive's memory only, so a drive that was encrypting or decrypting
// resumes without a key and queues UNIT ATTENTION 2A/12 (data encryption
// parameters changed by vendor specific event). The initiator's next
// command gets it, and a WRITE that would otherwise go out unencrypted
// never does before the application has seen the change and set its key
// again.
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
	if m := s.Mode; m != nil && m.LBPMethod != lbpNone && (m.LBPMethod > 7 || d.pers.LBP&(1<<m.LBPMethod) == 0) {
		return fmt.Errorf("vtape %s: resume: logical block protection method %d, which the %s does not have", d.name, m.LBPMethod, d.pers.Product)
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
	if m := s.Mode; m != nil {
		d.mode.density, d.mode.compression, d.mode.rsmk, d.mode.pews, d.mode.dsense = m.Density, m.Compression, m.RSMK, m.PEWS, m.DSense
		if d.pers.Enterprise {
			d.mode.eodControl = m.EODControl & eodControlMask
		}
		d.mode.lbp = lbpState{method: m.LBPMethod, write: m.LBPWrite, read: m.LBPRead, rbdp: m.LBPRBDP}
		d.applySenseFormat()
		d.prevent = m.Prevent
		d.spc.UA.Clear() // only New's power on and load were queued
		if m.Encryption {
			d.spc.UA.Add(scsi.EncryptionChangedByVendorEvent)
		}
	}
	d.notePos()
	return nil
}
