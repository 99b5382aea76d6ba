package scsi_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// unit is a logical unit for the table tests: it records which command
// ran and has a switchable state.
type unit struct {
	closed, notReady bool
	ran              []string
	err              error
}

func (u *unit) isClosed() bool { return u.closed }
func (u *unit) ready() (scsi.Sense, bool) {
	return scsi.Sense{Key: scsi.NotReady, ASC: scsi.MediumNotPresent}, u.notReady
}

var testTable = scsi.NewTable(scsi.SBC, scsi.Readiness[*unit]{Closed: (*unit).isClosed, NotReady: (*unit).ready}, []scsi.Op[*unit]{
	{Desc: scsi.Usage(0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff, 0x04).WithMedium().WithClass(scsi.ClassRead).WithExtent(read10Extent),
		Run: func(u *unit, _ *scsi.Command) error { u.ran = append(u.ran, "read_10"); return u.err }},
	{Desc: scsi.Usage(0x12, 0x01, 0xff, 0xff, 0xff, 0x04),
		Respond: func(u *unit, _ *scsi.Command) scsi.Response { u.ran = append(u.ran, "inquiry"); return scsi.Good }},
	{Desc: scsi.Usage(0x00, 0, 0, 0, 0, 0x04),
		Run: func(u *unit, _ *scsi.Command) error { u.ran = append(u.ran, "test_unit_ready"); return nil }},
	// Two service actions of SERVICE ACTION IN(16).
	{Desc: scsi.Usage(0x9e, 0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithSA(scsi.SAGetLBAStatus),
		Run: func(u *unit, _ *scsi.Command) error { u.ran = append(u.ran, "get_lba_status"); return nil }},
	{Desc: scsi.Usage(0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithSA(scsi.SAReadCapacity16),
		Run: func(u *unit, _ *scsi.Command) error { u.ran = append(u.ran, "read_capacity_16"); return nil }},
	{Desc: scsi.Usage(0xa3, 0x0c, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithSA(scsi.SAReportSupportedOpCodes),
		Run: func(u *unit, _ *scsi.Command) error { u.ran = append(u.ran, "report_supported_opcodes"); return nil }},
}...)

func read10Extent(c scsi.CDB) (scsi.Extent, bool) {
	return scsi.Extent{LBA: uint64(c.Uint32(2)), Blocks: uint64(c.Uint16(7))}, len(c) >= 10
}

func cdbOf(op byte, n int, set map[int]byte) scsi.CDB {
	c := make(scsi.CDB, n)
	c[0] = op
	for i, v := range set {
		c[i] = v
	}
	return c
}

// TestServeOrder pins the spine's checks and their order.
func TestServeOrder(t *testing.T) {
	read10 := cdbOf(0x28, 10, map[int]byte{8: 1})
	notReady := scsi.Sense{Key: scsi.NotReady, ASC: scsi.MediumNotPresent}
	for _, tc := range []struct {
		name    string
		u       unit
		ua      bool
		cdb     scsi.CDB
		want    scsi.Sense // zero: GOOD
		wantRan string
	}{
		{name: "good", cdb: read10, wantRan: "read_10"},
		{name: "closed before anything", u: unit{closed: true, notReady: true}, ua: true, cdb: cdbOf(0xff, 6, nil),
			want: scsi.Sense{Key: scsi.NotReady, ASC: scsi.LogicalUnitNotReadyCause}},
		{name: "unit attention before an unknown opcode", ua: true, cdb: cdbOf(0xff, 6, nil),
			want: scsi.Sense{Key: scsi.UnitAttention, ASC: scsi.PowerOnResetOrBusDeviceReset}},
		{name: "INQUIRY passes a unit attention", ua: true, cdb: cdbOf(0x12, 6, map[int]byte{4: 36}), wantRan: "inquiry"},
		{name: "empty CDB", cdb: scsi.CDB{}, want: scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidCommandOperationCode}},
		{name: "unknown opcode", cdb: cdbOf(0x2a, 10, nil), want: scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidCommandOperationCode}},
		{name: "unknown service action", cdb: cdbOf(0x9e, 16, map[int]byte{1: 0x11}),
			want: scsi.InvalidFieldSense(1, 4)},
		{name: "first service action", cdb: cdbOf(0x9e, 16, map[int]byte{1: 0x10}), wantRan: "read_capacity_16"},
		{name: "second service action", cdb: cdbOf(0x9e, 16, map[int]byte{1: 0x12}), wantRan: "get_lba_status"},
		{name: "short CDB", cdb: read10[:9], want: scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInCDB}},
		{name: "a service-action opcode alone: no field to point at", cdb: scsi.CDB{0x9e},
			want: scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInCDB}},
		{name: "NACA", cdb: cdbOf(0x28, 10, map[int]byte{9: 0x04}), want: scsi.InvalidFieldSense(9, 2)},
		{name: "NACA before not ready", u: unit{notReady: true}, cdb: cdbOf(0x28, 10, map[int]byte{9: 0x04}),
			want: scsi.InvalidFieldSense(9, 2)},
		{name: "LINK and FLAG ignored", cdb: cdbOf(0x00, 6, map[int]byte{5: 0x03}), wantRan: "test_unit_ready"},
		{name: "not ready", u: unit{notReady: true}, cdb: read10, want: notReady},
		{name: "not ready, no medium needed", u: unit{notReady: true}, cdb: cdbOf(0x00, 6, nil), wantRan: "test_unit_ready"},
		{name: "error becomes sense", u: unit{err: scsi.ErrLBAOutOfRange}, cdb: read10,
			want: scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.LBAOutOfRange}, wantRan: "read_10"},
		{name: "unknown error is a hardware error", u: unit{err: errors.New("disk on fire")}, cdb: read10,
			want: scsi.Sense{Key: scsi.HardwareError, ASC: scsi.InternalTargetFailure}, wantRan: "read_10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.u
			var s scsi.SPC
			if tc.ua {
				s.UA.Add(scsi.PowerOnResetOrBusDeviceReset)
			}
			r := testTable.Serve(&u, &s, &scsi.Command{CDB: tc.cdb})
			if tc.want == (scsi.Sense{}) {
				if r.Status != scsi.StatusGood {
					t.Errorf("status %s sense %v, want GOOD", r.Status, r.Sense)
				}
			} else if r.Status != scsi.StatusCheckCondition || r.Sense != tc.want {
				t.Errorf("status %s sense %+v, want CHECK CONDITION %+v", r.Status, r.Sense, tc.want)
			}
			if got := strings.Join(u.ran, ","); got != tc.wantRan {
				t.Errorf("ran %q, want %q", got, tc.wantRan)
			}
		})
	}
}

// TestServeSenseFormat: the spine's own sense follows D_SENSE.
func TestServeSenseFormat(t *testing.T) {
	s := scsi.SPC{SenseFormat: scsi.DescriptorFormat}
	r := testTable.Serve(&unit{}, &s, &scsi.Command{CDB: cdbOf(0xff, 6, nil)})
	if r.Sense.Format != scsi.DescriptorFormat {
		t.Errorf("format %v, want descriptor", r.Sense.Format)
	}
}

func TestTableNames(t *testing.T) {
	for id, want := range map[scsi.CommandID]string{
		0x28: "read_10", 0x00: "test_unit_ready", 0xa3: "report_supported_opcodes",
		// Two service actions: the first keeps the opcode as its ID,
		// the second is the table's first further command.
		0x9e: "read_capacity_16", 256: "get_lba_status",
		0x2a: "", 257: "", scsi.MaxCommandIDs: "",
	} {
		if got := testTable.CommandName(id); got != want {
			t.Errorf("CommandName(%#x) = %q, want %q", uint16(id), got, want)
		}
	}
	for _, c := range []struct {
		cdb  scsi.CDB
		want scsi.CommandID
	}{
		{cdbOf(0x28, 10, nil), 0x28},
		{cdbOf(0x9e, 16, map[int]byte{1: 0x10}), 0x9e},
		{cdbOf(0x9e, 16, map[int]byte{1: 0x12}), 256},
		{cdbOf(0x9e, 16, map[int]byte{1: 0x11}), 0x9e}, // a service action not served: its opcode
		{cdbOf(0x9e, 1, nil), 0x9e},
		{cdbOf(0x2a, 10, nil), 0x2a},
		{scsi.CDB{}, 0},
	} {
		if got := testTable.CommandID(c.cdb); got != c.want {
			t.Errorf("CommandID(% x) = %#x, want %#x", c.cdb, uint16(got), uint16(c.want))
		}
	}
	if d := testTable.Describe(cdbOf(0x9e, 16, map[int]byte{1: 0x12})); d == nil || d.ServiceAction != scsi.SAGetLBAStatus {
		t.Errorf("Describe(GET LBA STATUS) = %+v", d)
	}
	if d := testTable.Describe(cdbOf(0x9e, 16, map[int]byte{1: 0x11})); d != nil {
		t.Errorf("Describe(SERVICE ACTION IN 11h) = %+v, want nil", d)
	}
	if d := testTable.Lookup(0x28); d == nil || d.Class != scsi.ClassRead || !d.Medium {
		t.Errorf("Lookup(READ(10)) = %+v", d)
	}
	if d := testTable.Lookup(0x2a); d != nil {
		t.Errorf("Lookup(WRITE(10)) = %+v, want nil", d)
	}
	var ops []scsi.OpCode
	for _, d := range testTable.All() {
		ops = append(ops, d.OpCode)
	}
	if want := []scsi.OpCode{0x00, 0x12, 0x28, 0x9e, 0x9e, 0xa3}; !slices.Equal(ops, want) {
		t.Errorf("All: % x, want % x", ops, want)
	}
	if e, ok := testTable.Extent(cdbOf(0x28, 10, map[int]byte{5: 9, 8: 2})); !ok || e.LBA != 9 || e.Blocks != 2 {
		t.Errorf("Extent(READ(10) LBA 9, 2 blocks) = %+v %v", e, ok)
	}
	for _, c := range []scsi.CDB{cdbOf(0x28, 9, nil), cdbOf(0x12, 6, nil), cdbOf(0x2a, 10, nil), {}} {
		if e, ok := testTable.Extent(c); ok {
			t.Errorf("Extent(% x) = %+v, want none (short, no extent, not served, empty)", c, e)
		}
	}
	// Commands adds the core commands LIO answers, in opcode order.
	cmds := testTable.Commands()
	if !slices.IsSortedFunc(cmds, func(a, b scsi.CommandInfo) int { return int(a.OpCode) - int(b.OpCode) }) {
		t.Error("Commands not in opcode order")
	}
	if len(cmds) != len(ops)+len(scsi.CoreCommands()) {
		t.Errorf("%d commands, want %d", len(cmds), len(ops)+len(scsi.CoreCommands()))
	}
	small := testTable.Select(func(d *scsi.Desc) bool { return d.OpCode != 0x28 })
	if small.CommandName(0x28) != "" || small.CommandName(0x12) != "inquiry" {
		t.Errorf("Select kept READ(10) or lost INQUIRY")
	}
	// A selected table keeps the IDs: without READ CAPACITY(16), GET LBA
	// STATUS is still 256 and 0x9e names nothing.
	noRC := testTable.Select(func(d *scsi.Desc) bool { return d.OpCode != 0x9e || d.ServiceAction != scsi.SAReadCapacity16 })
	if got := noRC.CommandID(cdbOf(0x9e, 16, map[int]byte{1: 0x12})); got != 256 || noRC.CommandName(256) != "get_lba_status" || noRC.CommandName(0x9e) != "" {
		t.Errorf("after Select: GET LBA STATUS is %#x (%q), 0x9e %q", uint16(got), noRC.CommandName(256), noRC.CommandName(0x9e))
	}
	r := small.Serve(&unit{}, &scsi.SPC{}, &scsi.Command{CDB: cdbOf(0x28, 10, nil)})
	if r.Sense.ASC != scsi.InvalidCommandOperationCode {
		t.Errorf("READ(10) after Select: %+v", r.Sense)
	}
}

// TestNewTableRefuses: tables that are wrong by construction panic when
// built (package initialisation, so a test run finds them).
func TestNewTableRefuses(t *testing.T) {
	run := func(*unit, *scsi.Command) error { return nil }
	resp := func(*unit, *scsi.Command) scsi.Response { return scsi.Good }
	for name, ops := range map[string][]scsi.Op[*unit]{
		"no usage":      {{Run: run}},
		"wrong opcode":  {{Desc: scsi.Desc{CommandInfo: scsi.CommandInfo{OpCode: 0x28, Usage: []byte{0x2a}}}, Run: run}},
		"no function":   {{Desc: scsi.Usage(0x00, 0, 0, 0, 0, 0x04)}},
		"two functions": {{Desc: scsi.Usage(0x00, 0, 0, 0, 0, 0x04), Run: run, Respond: resp}},
		"listed twice":  {{Desc: scsi.Usage(0x00, 0, 0, 0, 0, 0x04), Run: run}, {Desc: scsi.Usage(0x00, 0, 0, 0, 0, 0x04), Run: run}},
		"same SA twice": {{Desc: scsi.Usage(0xa3, 0x0c).WithSA(0x0c), Run: run}, {Desc: scsi.Usage(0xa3, 0x0c).WithSA(0x0c), Run: run}},
		"SA and no SA":  {{Desc: scsi.Usage(0xa3, 0x0c).WithSA(0x0c), Run: run}, {Desc: scsi.Usage(0xa3, 0x0c), Run: run}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewTable did not panic", name)
				}
			}()
			scsi.NewTable(scsi.SBC, scsi.Readiness[*unit]{}, ops...)
		}()
	}
}

// TestServeNoAlloc: the spine adds no allocation to a command.
func TestServeNoAlloc(t *testing.T) {
	u := &unit{ran: make([]string, 0, 1)}
	var s scsi.SPC
	cmd := &scsi.Command{CDB: cdbOf(0x00, 6, nil), Data: scsi.NewBuffer()}
	if n := testing.AllocsPerRun(100, func() {
		u.ran = u.ran[:0]
		testTable.Serve(u, &s, cmd)
	}); n != 0 {
		t.Errorf("%v allocations per command", n)
	}
}
