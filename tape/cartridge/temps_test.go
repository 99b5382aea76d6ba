package cartridge

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A Create cut by a crash leaves its temporary image; opening the media
// directory removes those a minute old, not one a Create in progress
// holds, nor a cartridge or another file that merely looks alike.
func TestRemoveStaleCreates(t *testing.T) {
	dir := t.TempDir()
	if err := Create(dir, "A00001L8", Options{}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleCreateAge)
	files := map[string]struct {
		stays bool
		mtime time.Time
	}{
		".A00002L8.vtape.tmp-0123456789ab":        {false, old},       // cut by a crash: removed
		".A00003L8.vtape.tmp-0123456789ab":        {true, time.Now()}, // a Create in progress
		".A00004L8.vtape.tmp-0123456789":          {true, old},        // not Create's name
		".A00005L8.vtape.tmp-0123456789AB":        {true, old},
		".bad/.vtape.tmp-0123456789ab":            {true, old},
		"A00006L8.vtape.tmp-0123456789ab":         {true, old},
		".drive-A00007L8.vtape.tmp-01234567890ab": {true, old},
	}
	for f, c := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, c.mtime, c.mtime); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := NewLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lib.LoadDriveState("t0"); err != nil {
		t.Fatal(err)
	}
	for f, c := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != c.stays {
			t.Errorf("%s: stays %v, want %v", f, err == nil, c.stays)
		}
	}
	if got, err := List(dir); err != nil || len(got) != 1 || got[0] != "A00001L8" {
		t.Errorf("cartridges after: %v, %v", got, err)
	}
}

// A failed save names the file the user knows, not the temporary one it
// was writing.
func TestSaveErrorsNameNoTemporaryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "media")
	lib, err := MakeLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	err = lib.SaveDriveState("t0", tape.DriveState{})
	if err == nil || strings.Contains(err.Error(), ".tmp") || !strings.Contains(err.Error(), filepath.Join(dir, ".drive-t0.json")) {
		t.Errorf("SaveDriveState in a removed directory: %v", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Path(dir, "A00001L8"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = Create(dir, "A00001L8", Options{})
	if !errors.Is(err, ErrExists) || strings.Contains(err.Error(), ".tmp") {
		t.Errorf("Create over an existing image: %v", err)
	}
}
