package tcmu

import (
	"fmt"

	"github.com/vscsid/vscsid/scsi"
)

// maxCDB bounds the CDB copied out of an entry: a VARIABLE LENGTH CDB is at
// most 8+255 bytes (the kernel and tcm_loop cap it at 260,
// SCSI_MAX_VARLEN_CDB_SIZE).
const maxCDB = 8 + 255

// cmdCtx is one command as the device hands it to the Handler. The device
// owns a fixed set of them and reuses them, so serving a command allocates
// nothing once segs has grown to the largest iovec count seen.
type cmdCtx struct {
	id      uint16
	op      uint8
	cdbLen  int
	cdb     [maxCDB + 1]byte
	segs    [][]byte
	offs    []int // data-area offset of each segment (scsi.Buffer.ResetTracked)
	bidi    bool  // the entry carries BIDI iovecs (unsupported)
	buf     scsi.Buffer
	cmd     scsi.Command
	resp    scsi.Response
	aborted bool
	seen    int64 // device clock (ns) when the loop first saw the entry; 0 unless tracing
	end     int64 // device clock (ns) when the handler returned
	dur     int64 // ns spent in the handler
	panic   any   // a worker's recovered panic, reported to the owner
}

func newCmdCtx() *cmdCtx {
	c := &cmdCtx{segs: make([][]byte, 0, 8), offs: make([]int, 0, 8)}
	c.cmd.Data = &c.buf
	return c
}

// load validates the command entry at ring offset pos (length n, header
// already validated) and copies what the handler needs out of it: cmd_id,
// the CDB, and the data segments as slices of the data area. After load
// the entry's slot may be reused for another command's completion
// (out-of-order stealing overwrites the iovec array), so nothing here keeps
// pointing into the command ring; the segments point into the data area,
// which stays ours until this cmd_id is completed.
func (r *ring) load(c *cmdCtx, pos, n uint32) error {
	if n < cmdEntrySize {
		return fmt.Errorf("%w: command entry at ring offset %d: length %d is shorter than the %d-byte entry", ErrRingCorrupt, pos, n, cmdEntrySize)
	}
	a := r.abs(pos)
	e := r.mem[a : a+uint64(n)]
	c.id = ne.Uint16(e[hdrCmdIDOff:])
	iovs := uint64(ne.Uint32(e[reqIovCntOff:]))
	bidi := uint64(ne.Uint32(e[reqIovBidiCntOff:]))
	total := iovs + bidi
	iovEnd := reqIovOff + iovSize*total // no overflow: both counts are < 2^32
	if iovEnd > uint64(n) {
		return fmt.Errorf("%w: command entry at ring offset %d (cmd_id %d): %d+%d iovecs do not fit in %d bytes", ErrRingCorrupt, pos, c.id, iovs, bidi, n)
	}
	cdbOff := ne.Uint64(e[reqCdbOffOff:])
	if cdbOff < a+iovEnd || cdbOff >= a+uint64(n) {
		return fmt.Errorf("%w: command entry at ring offset %d (cmd_id %d): cdb_off %#x outside the entry's CDB area [%#x,%#x)", ErrRingCorrupt, pos, c.id, cdbOff, a+iovEnd, a+uint64(n))
	}
	avail := r.mem[cdbOff : a+uint64(n)]
	cdbLen, ok := kernelCDBLen(avail)
	if !ok || cdbLen > len(avail) {
		return fmt.Errorf("%w: command entry at ring offset %d (cmd_id %d): CDB (opcode %#02x) does not fit in the %d bytes after cdb_off", ErrRingCorrupt, pos, c.id, avail[0], len(avail))
	}
	c.cdbLen = copy(c.cdb[:], avail[:cdbLen])
	c.op = c.cdb[0]

	if uint64(cap(c.segs)) < iovs {
		c.segs = make([][]byte, 0, iovs)
		c.offs = make([]int, 0, iovs)
	}
	c.segs, c.offs = c.segs[:0], c.offs[:0]
	mlen := uint64(len(r.mem))
	for i := range total {
		iv := e[reqIovOff+iovSize*i:]
		base, l := ne.Uint64(iv[iovBaseOff:]), ne.Uint64(iv[iovLenOff:])
		if base < r.dataOff || base > mlen || l > mlen-base {
			return fmt.Errorf("%w: command entry at ring offset %d (cmd_id %d): iovec %d [%#x,+%d) outside the data area [%#x,%#x)", ErrRingCorrupt, pos, c.id, i, base, l, r.dataOff, mlen)
		}
		if i < iovs {
			c.segs = append(c.segs, r.mem[base:base+l:base+l])
			c.offs = append(c.offs, int(base-r.dataOff))
		}
	}
	c.bidi = bidi > 0
	c.buf.ResetTracked(c.segs, c.offs, r.zero)
	cdb, err := scsi.ParseCDB(c.cdb[:c.cdbLen])
	if err != nil {
		// kernelCDBLen never returns fewer bytes than ParseCDB needs;
		// keep the raw bytes so the handler rejects the opcode.
		cdb = c.cdb[:c.cdbLen]
	}
	c.cmd.CDB = cdb
	c.cmd.Acted = 0
	c.resp = scsi.Response{}
	c.aborted = false
	c.panic = nil
	return nil
}

// tmr validates the TMR entry at pos (length n) and returns its type and
// the number of cmd_ids it lists; tmrID returns the i-th one.
func (r *ring) tmr(pos, n uint32) (TMRType, uint32, error) {
	if n < tmrEntrySize {
		return 0, 0, fmt.Errorf("%w: TMR entry at ring offset %d: length %d is shorter than the %d-byte entry", ErrRingCorrupt, pos, n, tmrEntrySize)
	}
	a := r.abs(pos)
	cnt := ne.Uint32(r.mem[a+tmrCmdCntOff:])
	if tmrCmdIDsOff+2*uint64(cnt) > uint64(n) {
		return 0, 0, fmt.Errorf("%w: TMR entry at ring offset %d: %d cmd_ids do not fit in %d bytes", ErrRingCorrupt, pos, cnt, n)
	}
	return TMRType(r.mem[a+tmrTypeOff]), cnt, nil
}

func (r *ring) tmrID(pos uint32, i uint32) uint16 {
	return ne.Uint16(r.mem[r.abs(pos)+tmrCmdIDsOff+2*uint64(i):])
}
