package cartridge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vscsid/vscsid/tape"
)

func TestIsTemp(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{".library-a.json.tmp-123456", true},
		{".library-a.json.tmp-x.json", false},       // the inventory of library "a.json.tmp-x"
		{".library-a.json.tmp-1.json", false},       // of library "a.json.tmp-1"
		{".library-a.json.tmp-1.json.tmp-9", false}, // its temporary file
		{".library-a.json.tmp-", false},
		{".library-a.json", false},
	} {
		if got := IsTemp(tc.name, ".library-a.json.tmp-", ""); got != tc.want {
			t.Errorf("IsTemp(%q) = %v", tc.name, got)
		}
	}
}

// Loading a drive's state removes what a save cut by a crash left: its
// own temporary files, not another drive's state or temporary file.
func TestLoadDriveStateRemovesTemps(t *testing.T) {
	dir := t.TempDir()
	lib, err := NewLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.SaveDriveState("t0", tape.DriveState{Barcode: "A00001L8"}); err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{
		".drive-t0.4242.tmp":   false, // t0's: removed
		".drive-t0.5.json":     true,  // the state of drive "t0.5"
		".drive-t0.5.4242.tmp": true,  // and its save in progress
	}
	for f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if s, ok, err := lib.LoadDriveState("t0"); err != nil || !ok || s.Barcode != "A00001L8" {
		t.Fatalf("LoadDriveState: %+v %v %v", s, ok, err)
	}
	for f, stays := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != stays {
			t.Errorf("%s: stays %v, want %v", f, err == nil, stays)
		}
	}
}
