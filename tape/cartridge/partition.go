package cartridge

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/vscsid/vscsid/tape"
)

// MinPartitionSize is the smallest partition Format and Create
// accept.
const MinPartitionSize = 1 << 20

// Format repartitions the medium, discarding all data. sizes gives the
// capacity of each partition in bytes (1..4 of them); 0 for the last one
// means the rest of the native capacity. Afterwards the position is BOP of
// partition 0.
func (m *Image) Format(sizes []int64) error {
	if err := m.checkWritable(); err != nil {
		return err
	}
	if m.sb.flags&flagWORM != 0 {
		for _, p := range m.parts {
			if p.eod.obj > 0 || p.synced.obj > 0 {
				return tape.ErrWORMOverwrite
			}
		}
	}
	entries, err := layout(sizes, m.sb.capacity, m.sb.earlyWarning, m.rng)
	if err != nil {
		return err
	}
	// New superblock first: once it is durable the old records cannot be
	// reached (they link to the old BOP ids), so cutting the file after it
	// is only about space.
	m.sb.formatCount++
	flags := m.sb.flags
	m.sb.flags &^= flagEncrypted
	if err := m.writeSuperblock(entries); err != nil {
		m.sb.formatCount--
		m.sb.flags = flags
		return err
	}
	m.sb.parts = entries
	if err := m.f.Truncate(dataStart); err != nil {
		return fmt.Errorf("cartridge: truncate: %w", err)
	}
	m.parts = make([]partition, len(entries))
	var lastStart int64
	for _, e := range entries {
		lastStart = max(lastStart, e.start)
	}
	for i, e := range entries {
		p := &m.parts[i]
		p.start, p.capacity, p.ew, p.bop = e.start, e.capacity, e.ew, e.bop
		p.synced = p.bopPos()
		p.eod = p.synced
		p.last = e.start == lastStart
		p.idx.init()
	}
	m.dirty = true
	m.vcrFresh = false
	m.bumpVCR()
	m.buildInfo()
	m.setPos(0, m.parts[0].bopPos())
	return nil
}

// layout validates partition sizes and places the regions in the file.
// Regions are placed in increasing order of size so that the largest one
// is last: it can then grow to any size and shrink with ftruncate, and the
// sparse file's offsets stay small (ext4 limits a file to 16 TiB).
func layout(sizes []int64, capacity, earlyWarning int64, rng *rand.ChaCha8) ([]partEntry, error) {
	if len(sizes) < 1 || len(sizes) > maxPartitions {
		return nil, fmt.Errorf("%w: %d partitions (1..%d)", ErrBadPartitions, len(sizes), maxPartitions)
	}
	caps := make([]int64, len(sizes))
	var sum int64
	for i, s := range sizes {
		if s == 0 && i == len(sizes)-1 {
			continue
		}
		if s < MinPartitionSize || s > maxCapacity {
			return nil, fmt.Errorf("%w: partition %d size %d (minimum %d)", ErrBadPartitions, i, s, MinPartitionSize)
		}
		caps[i] = s
		sum += s
	}
	if sum > capacity {
		return nil, fmt.Errorf("%w: partitions total %d bytes, capacity is %d", ErrBadPartitions, sum, capacity)
	}
	if caps[len(caps)-1] == 0 {
		rest := capacity - sum
		if rest < MinPartitionSize {
			return nil, fmt.Errorf("%w: %d bytes left for the last partition (minimum %d)", ErrBadPartitions, rest, MinPartitionSize)
		}
		caps[len(caps)-1] = rest
	}
	order := make([]int, len(caps))
	for i := range order {
		order[i] = i
	}
	// stable insertion sort by size
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && caps[order[j]] < caps[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	entries := make([]partEntry, len(caps))
	start := int64(dataStart)
	for _, i := range order {
		bop := rng.Uint64()
		entries[i] = partEntry{
			start: start, capacity: caps[i], ew: min(earlyWarning, caps[i]/4),
			bop: bop, lastID: bop,
		}
		start += caps[i]
	}
	return entries, nil
}

// ErrBadPartitions is returned by Format and Create for partition
// sizes that do not fit the medium.
var ErrBadPartitions = errors.New("cartridge: invalid partition sizes")
