package cartridge

import (
	"fmt"
	"slices"
	"time"
)

// Stat describes a cartridge image for tools (vscsictl media inspect).
type Stat struct {
	Path                  string          `json:"path"`
	Barcode               string          `json:"barcode"`
	Serial                string          `json:"serial"`
	Version               int             `json:"format_version"`
	Created               time.Time       `json:"created"`
	Density               uint8           `json:"density"`
	WriteProtected        bool            `json:"write_protected"` // the cartridge's tab
	WORM                  bool            `json:"worm"`
	Capacity              int64           `json:"capacity_bytes"`
	EarlyWarning          int64           `json:"early_warning_bytes"`
	LoadCount             uint64          `json:"load_count"`
	FormatCount           uint64          `json:"format_count"`
	VolumeChangeReference uint64          `json:"volume_change_reference"`
	HeaderSlot            string          `json:"header_slot"` // "A" or "B": the newest valid superblock
	HeaderSequence        uint64          `json:"header_sequence"`
	Partitions            []PartitionStat `json:"partitions"`
	Attributes            []AttributeStat `json:"attributes"`
}

// PartitionStat describes one partition.
type PartitionStat struct {
	Index         int      `json:"index"`
	Start         int64    `json:"region_offset"`
	Capacity      int64    `json:"capacity_bytes"`
	EarlyWarning  int64    `json:"early_warning_bytes"`
	Used          int64    `json:"used_bytes"`
	Objects       uint64   `json:"objects"`
	Filemarks     uint64   `json:"filemarks"`
	Setmarks      uint64   `json:"setmarks"`
	SyncedObjects uint64   `json:"synced_objects"`
	Recovery      Recovery `json:"recovery"`
}

// AttributeStat is one stored host attribute.
type AttributeStat struct {
	Partition int    `json:"partition"`
	ID        uint16 `json:"id"`
	Value     []byte `json:"value"`
}

// Stat returns a description of the image.
func (m *Image) Stat() Stat {
	st := Stat{
		Path: m.path, Barcode: m.sb.barcode, Serial: fmt.Sprintf("%016X", m.sb.serial),
		Version: int(m.sb.version), Created: time.Unix(m.sb.created, 0).UTC(), Density: m.sb.density,
		WriteProtected: m.sb.flags&flagWriteProtected != 0, WORM: m.sb.flags&flagWORM != 0,
		Capacity: m.sb.capacity, EarlyWarning: m.sb.earlyWarning,
		LoadCount: m.sb.loadCount, FormatCount: m.sb.formatCount, VolumeChangeReference: m.sb.vcr,
		HeaderSlot: string(rune('A' + m.slot)), HeaderSequence: m.sb.seq,
		Attributes: []AttributeStat{},
	}
	for i := range m.parts {
		p := &m.parts[i]
		ps := PartitionStat{
			Index: i, Start: p.start, Capacity: p.capacity, EarlyWarning: p.ew, Used: p.eod.off,
			Objects: p.eod.obj, Filemarks: p.eod.file, Setmarks: p.eod.set, SyncedObjects: p.synced.obj,
		}
		if i < len(m.recovery) {
			ps.Recovery = m.recovery[i]
		}
		st.Partitions = append(st.Partitions, ps)
	}
	for k, v := range m.mam {
		st.Attributes = append(st.Attributes, AttributeStat{Partition: int(k.part), ID: k.id, Value: slices.Clone(v)})
	}
	slices.SortFunc(st.Attributes, func(a, b AttributeStat) int {
		if a.Partition != b.Partition {
			return a.Partition - b.Partition
		}
		return int(a.ID) - int(b.ID)
	})
	return st
}
