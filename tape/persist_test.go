package tape

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestRestorePolicy(t *testing.T) {
	have := func(b string) error {
		if b == "GONE01" {
			return fs.ErrNotExist
		}
		return nil
	}
	snapA := &Snapshot{Barcode: "AAA001", Object: 7}
	snapB := &Snapshot{Barcode: "BBB002", Object: 3}
	for _, tc := range []struct {
		name       string
		saved      DriveState
		ok         bool
		configured string
		want       string
		resume     *Snapshot
		note       bool
	}{
		{"no state: the configured cartridge", DriveState{}, false, "AAA001", "AAA001", nil, false},
		{"no state, empty drive configured", DriveState{}, false, "", "", nil, false},
		{"same cartridge, crash", DriveState{Barcode: "AAA001", ConfigBarcode: "AAA001"}, true, "AAA001", "AAA001", nil, false},
		{"same cartridge, clean stop resumes", DriveState{Barcode: "AAA001", ConfigBarcode: "AAA001", Resume: snapA}, true, "AAA001", "AAA001", snapA, false},
		{"swapped by the operator: the saved one", DriveState{Barcode: "BBB002", ConfigBarcode: "AAA001"}, true, "AAA001", "BBB002", nil, false},
		{"swapped, clean stop resumes the swapped one", DriveState{Barcode: "BBB002", ConfigBarcode: "AAA001", Resume: snapB}, true, "AAA001", "BBB002", snapB, false},
		{"resume of another cartridge is ignored", DriveState{Barcode: "BBB002", ConfigBarcode: "AAA001", Resume: snapA}, true, "AAA001", "BBB002", nil, false},
		{"ejected by the operator stays empty", DriveState{Barcode: "", ConfigBarcode: "AAA001"}, true, "AAA001", "", nil, false},
		{"configuration edited: it wins", DriveState{Barcode: "BBB002", ConfigBarcode: "OLD000", Resume: snapB}, true, "AAA001", "AAA001", nil, true},
		{"saved cartridge deleted: the configured one", DriveState{Barcode: "GONE01", ConfigBarcode: "AAA001"}, true, "AAA001", "AAA001", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Restore(tc.saved, tc.ok, tc.configured, have)
			if d.Barcode != tc.want || d.Resume != tc.resume || (d.Note != "") != tc.note {
				t.Errorf("Restore = %+v; want barcode %q resume %v note %v", d, tc.want, tc.resume, tc.note)
			}
		})
	}
}

func TestRestoreNoteNamesTheError(t *testing.T) {
	d := Restore(DriveState{Barcode: "X1", ConfigBarcode: "A1"}, true, "A1", func(string) error { return errors.New("disk on fire") })
	if d.Barcode != "A1" || d.Note == "" {
		t.Fatalf("%+v", d)
	}
}

func TestChangeMediumBarcode(t *testing.T) {
	for _, tc := range []struct {
		cfg, want, err string
	}{
		{"", "", ""},
		{"barcode=ABC001L9", "ABC001L9", ""},
		{"media=/m;barcode=X1", "X1", ""},
		{"media=/m", "", ""},
		{"barcode=A;size=1", "", "barcode"},
		{"colour=red", "", "colour"},
	} {
		got, err := ChangeMediumBarcode(tc.cfg)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ChangeMediumBarcode(%q) = %q, %v; want %q, error containing %q", tc.cfg, got, err, tc.want, tc.err)
		}
	}
}
