package cartridge

import "slices"

// The sparse index of one partition. It is built as the drive moves over
// the tape (writes, forward and backward motion) and never read from disk,
// so opening a cartridge costs nothing per object. Its memory is bounded:
//
//   - checkpoints: the byte offset of every every-th object, at most
//     maxCheckpoints entries; when full, the spacing doubles and every other
//     entry is dropped, so the index covers any number of objects;
//   - filemarks: the offsets of the filemarks from BOP onwards, complete up to
//     object fmKnown, at most maxFilemarks entries (beyond that, spacing over
//     filemarks falls back to scanning record headers).
//
// An entry is 16 bytes, so an index never exceeds
// (maxCheckpoints+maxFilemarks)*16 bytes = 192 KiB per partition. It
// starts at initEntries of each and doubles as it fills: a drive that
// loads cartridges of a few files (a library's, a backup's) keeps a few
// KiB, not 192 KiB per partition per load.

const (
	maxCheckpoints   = 4096
	maxFilemarks     = 8192
	firstCheckpoints = 256 // initial spacing in objects
	initEntries      = 64
)

// checkpoint is the position before object obj: its record starts at off.
type checkpoint struct {
	obj uint64
	off int64
}

type index struct {
	every   uint64
	cps     []checkpoint // sorted by obj; every obj is a non-zero multiple of every
	fms     []checkpoint // filemark k (0-based) is fms[k]; complete for obj < fmKnown
	fmKnown uint64
}

func (x *index) init() {
	x.every = firstCheckpoints
	if x.cps == nil {
		x.cps = make([]checkpoint, 0, initEntries)
		x.fms = make([]checkpoint, 0, initEntries)
	}
	x.cps = x.cps[:0]
	x.fms = x.fms[:0]
	x.fmKnown = 0
}

// note records that the record of object obj starts at off. It is called
// for every object the image moves over or writes; it allocates only when
// the index doubles (a bounded number of times per load).
func (x *index) note(obj uint64, off int64, filemark bool) {
	if obj == x.fmKnown && len(x.fms) < maxFilemarks {
		if filemark {
			x.fms = append(room(x.fms, maxFilemarks), checkpoint{obj, off})
		}
		x.fmKnown++
	}
	if obj == 0 || obj%x.every != 0 {
		return
	}
	i := x.search(obj)
	if i < len(x.cps) && x.cps[i].obj == obj {
		return
	}
	x.add(i, obj, off)
}

func (x *index) add(i int, obj uint64, off int64) {
	if len(x.cps) == maxCheckpoints {
		// Full: double the spacing and keep the entries that still fall on
		// it, in place.
		x.every *= 2
		k := 0
		for _, c := range x.cps {
			if c.obj%x.every == 0 {
				x.cps[k] = c
				k++
			}
		}
		x.cps = x.cps[:k]
		if obj%x.every != 0 {
			return
		}
		i = x.search(obj)
	}
	x.cps = slices.Insert(room(x.cps, maxCheckpoints), i, checkpoint{obj, off})
}

// room returns s with room for one more entry: s itself, or a copy with
// twice its capacity, never more than limit (which len(s) is below).
func room(s []checkpoint, limit int) []checkpoint {
	if len(s) < cap(s) {
		return s
	}
	n := make([]checkpoint, len(s), min(2*cap(s), limit))
	copy(n, s)
	return n
}

// floor returns the checkpoint with the largest obj <= obj.
func (x *index) floor(obj uint64) (checkpoint, bool) {
	i := x.search(obj + 1) // first with c.obj > obj
	if i == 0 {
		return checkpoint{}, false
	}
	return x.cps[i-1], true
}

// ceil returns the checkpoint with the smallest obj >= obj.
func (x *index) ceil(obj uint64) (checkpoint, bool) {
	i := x.search(obj)
	if i == len(x.cps) {
		return checkpoint{}, false
	}
	return x.cps[i], true
}

// search returns the index of the first checkpoint with c.obj >= obj.
func (x *index) search(obj uint64) int {
	lo, hi := 0, len(x.cps)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.cps[m].obj < obj {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// truncate forgets everything at or after object obj (a write or erase
// there discards it). A checkpoint for obj itself stays valid: the record
// that will be written there starts at the same offset.
func (x *index) truncate(obj uint64) {
	x.cps = x.cps[:x.search(obj+1)]
	k := len(x.fms)
	for k > 0 && x.fms[k-1].obj >= obj {
		k--
	}
	x.fms = x.fms[:k]
	x.fmKnown = min(x.fmKnown, obj)
}

// filemark returns the k-th filemark (0-based) if the index knows it.
func (x *index) filemark(k uint64) (checkpoint, bool) {
	if k < uint64(len(x.fms)) {
		return x.fms[k], true
	}
	return checkpoint{}, false
}
