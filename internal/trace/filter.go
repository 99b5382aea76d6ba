package trace

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Filter selects the commands a trace shows; every filter given must
// hold. Its fields are the flags of vscsictl trace and the query
// parameters of the control socket's trace stream.
type Filter struct {
	// Op is the fault rules' op= value: classes (read, write, verify,
	// media), command names and opcodes, separated by '|'.
	Op string
	// Status is a status name (good, check_condition, busy, ...) or
	// "check" for check_condition.
	Status string
	// Sense is KEY[/ASC[/ASCQ]]: a sense key name or 0..15, ASC and ASCQ
	// in hex; it implies CHECK CONDITION.
	Sense string
	// LBA is START[+COUNT] (disk): the command's block range intersects
	// it.
	LBA string
	// MinLatency keeps commands whose service time is at least this.
	MinLatency time.Duration
}

// FilterHelp documents the filters (vscsictl trace --help).
const FilterHelp = `--op        commands: read, write, verify, media, a command name (write_6,
            read_10, write_filemarks_6, move_medium, ...) or an opcode (0x0a),
            alternatives separated by '|' (the fault rules' op=)
--status    good, check (check_condition), condition_met, busy, task_set_full,
            reservation_conflict, task_aborted
--sense     KEY[/ASC[/ASCQ]]: medium_error, illegal_request/0x24, 3/0x11/0x00
--lba       START[+COUNT] (disks): the command's blocks intersect the range
--min-latency DURATION: service time at least this (100us, 2ms)`

// Query encodes f as URL query parameters.
func (f Filter) Query(q url.Values) {
	for k, v := range map[string]string{"op": f.Op, "status": f.Status, "sense": f.Sense, "lba": f.LBA} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.MinLatency > 0 {
		q.Set("min_latency", f.MinLatency.String())
	}
}

// FilterFromQuery is the Filter of query parameters (Query), checked.
func FilterFromQuery(q url.Values) (Filter, error) {
	f := Filter{Op: q.Get("op"), Status: q.Get("status"), Sense: q.Get("sense"), LBA: q.Get("lba")}
	if v := q.Get("min_latency"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Filter{}, fmt.Errorf("min_latency %q: want a duration such as 100us or 2ms", v)
		}
		f.MinLatency = d
	}
	_, err := f.compile(nil)
	return f, err
}

// Matcher is a Filter compiled for one device's command table.
type Matcher struct {
	f       Filter
	cmds    scsi.CommandTable
	sel     *fault.Selector
	status  scsi.Status
	hasStat bool
	key     scsi.SenseKey
	asc     []uint8 // ASC, then ASCQ, as given
	hasKey  bool
	lba     [2]uint64 // start, count
	hasLBA  bool
}

// Compile resolves f against a device's command table (op= names).
func (f Filter) Compile(cmds scsi.CommandTable) (*Matcher, error) { return f.compile(cmds) }

func (f Filter) compile(cmds scsi.CommandTable) (*Matcher, error) {
	m := &Matcher{f: f, cmds: cmds}
	if f.Op != "" {
		sel, err := fault.NewSelector(f.Op, cmds)
		if err != nil {
			return nil, err
		}
		m.sel = &sel
	}
	if f.Status != "" {
		st, ok := statusByName(f.Status)
		if !ok {
			return nil, fmt.Errorf("status %q: want good, check, condition_met, busy, task_set_full, reservation_conflict or task_aborted", f.Status)
		}
		m.status, m.hasStat = st, true
	}
	if f.Sense != "" {
		if err := m.parseSense(f.Sense); err != nil {
			return nil, fmt.Errorf("sense %q: %w", f.Sense, err)
		}
	}
	if f.LBA != "" {
		a, c, hasCount := strings.Cut(f.LBA, "+")
		start, err := cfgstring.Uint(a, 0, ^uint64(0))
		n := uint64(1)
		if err == nil && hasCount {
			n, err = cfgstring.Uint(c, 1, ^uint64(0))
		}
		if err != nil {
			return nil, fmt.Errorf("lba %q: want START or START+COUNT, e.g. 0x1234+10", f.LBA)
		}
		m.lba, m.hasLBA = [2]uint64{start, n}, true
	}
	return m, nil
}

func statusByName(s string) (scsi.Status, bool) {
	if s == "check" {
		return scsi.StatusCheckCondition, true
	}
	for _, st := range []scsi.Status{scsi.StatusGood, scsi.StatusCheckCondition, scsi.StatusConditionMet, scsi.StatusBusy,
		scsi.StatusReservationConflict, scsi.StatusTaskSetFull, scsi.StatusACAActive, scsi.StatusTaskAborted} {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

func (m *Matcher) parseSense(v string) error {
	parts := strings.Split(v, "/")
	if len(parts) > 3 {
		return errors.New("want KEY[/ASC[/ASCQ]], e.g. medium_error/0x11/0x00")
	}
	key, ok := scsi.SenseKey(0), false
	for k := range 16 {
		if scsi.SenseKey(k).String() == parts[0] {
			key, ok = scsi.SenseKey(k), true
		}
	}
	if !ok {
		n, err := cfgstring.Uint(parts[0], 0, 15)
		if err != nil {
			return fmt.Errorf("%s: not a sense key name (medium_error, illegal_request, ...) or 0..15", parts[0])
		}
		key = scsi.SenseKey(n)
	}
	m.key, m.hasKey = key, true
	for _, p := range parts[1:] {
		n, err := cfgstring.Uint("0x"+strings.TrimPrefix(strings.TrimPrefix(p, "0x"), "0X"), 0, 0xff)
		if err != nil {
			return fmt.Errorf("%s: not a hex byte (0x24, 24)", p)
		}
		m.asc = append(m.asc, uint8(n))
	}
	return nil
}

// Match reports whether the command r is one the filter selects.
func (m *Matcher) Match(r *tcmu.TraceRecord) bool {
	cdb := scsi.CDB(r.CDB[:min(int(r.CDBLen), len(r.CDB))])
	if m.sel != nil && m.cmds != nil {
		var class scsi.Class
		if d := m.cmds.Describe(cdb); d != nil {
			class = d.Class
		}
		if !m.sel.Selects(r.ID, class) {
			return false
		}
	}
	if m.hasStat && r.Status != m.status {
		return false
	}
	if m.hasKey {
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != m.key {
			return false
		}
		if len(m.asc) > 0 && r.Sense.ASC.Code() != m.asc[0] || len(m.asc) > 1 && r.Sense.ASC.Qualifier() != m.asc[1] {
			return false
		}
	}
	if m.hasLBA {
		if m.cmds == nil || m.cmds.Set() != scsi.SBC {
			return false
		}
		x, ok := m.cmds.Extent(cdb)
		if !ok || !intersects(x, m.lba[0], m.lba[1]) {
			return false
		}
	}
	return r.End-r.Start >= int64(m.f.MinLatency)
}

// intersects reports whether x's blocks meet [start, start+n).
func intersects(x scsi.Extent, start, n uint64) bool {
	last := lastOf(start, n)
	if x.ToEnd {
		return last >= x.LBA
	}
	return x.Blocks > 0 && x.LBA <= last && start <= lastOf(x.LBA, x.Blocks)
}

// lastOf is the last block of [start, start+n), n > 0, saturating.
func lastOf(start, n uint64) uint64 {
	if start+(n-1) < start {
		return ^uint64(0)
	}
	return start + (n - 1)
}
