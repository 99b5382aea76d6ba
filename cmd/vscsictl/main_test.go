package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// vsctl runs the command line and returns stdout, stderr and the error.
func vsctl(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, err := vsctl(t, args...)
	if err != nil {
		t.Fatalf("vscsictl %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

func isUsage(err error) bool {
	var ue usageError
	return errors.As(err, &ue)
}

func TestUsageAndHelp(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		usage  bool   // usage error (exit 2)
		help   bool   // flag.ErrHelp (exit 0)
		stderr string // or stdout for help, with nothing on stderr
	}{
		{nil, true, false, "usage: vscsictl <command>"},
		{[]string{"help"}, false, true, "media"},
		{[]string{"frobnicate"}, true, false, "usage: vscsictl <command>"},
		{[]string{"media"}, true, false, "subcommands:"},
		{[]string{"media", "--help"}, false, true, "import"},
		{[]string{"media", "bogus"}, true, false, "subcommands:"},
		{[]string{"media", "create", "--help"}, false, true, "usage: vscsictl media create --barcode B"},
		{[]string{"media", "export", "-h"}, false, true, "--skip-setmarks"},
		{[]string{"devices", "--help"}, false, true, "usage: vscsictl devices"},
		{[]string{"media", "create", "--nope"}, true, false, "flag provided but not defined"},
		{[]string{"media", "create", "--dir", "/x"}, true, false, ""},
		{[]string{"media", "create", "--dir", "/x", "--barcode", "B", "extra"}, true, false, ""},
		{[]string{"media", "create", "--capacity", "lots"}, true, false, "bad size"},
		{[]string{"media", "create", "--capacity", "lots"}, true, false, "Run 'vscsictl media create --help' for its flags."},
	} {
		stdout, stderr, err := vsctl(t, tc.args...)
		if isUsage(err) != tc.usage || errors.Is(err, flag.ErrHelp) != tc.help {
			t.Errorf("%q: error %v (usage %v, help %v)", tc.args, err, tc.usage, tc.help)
		}
		if tc.help {
			if !strings.Contains(stdout, tc.stderr) || stderr != "" {
				t.Errorf("%q: stdout %q lacks %q, or stderr %q is not empty", tc.args, stdout, tc.stderr, stderr)
			}
		} else if msg := stderr + fmt.Sprint(err); !strings.Contains(msg, tc.stderr) {
			t.Errorf("%q: stderr and error %q lack %q", tc.args, msg, tc.stderr)
		}
	}
}

// --version, -V and the version command print the stamped version on
// stdout and exit 0.
func TestVersion(t *testing.T) {
	for _, a := range []string{"--version", "-V", "version"} {
		stdout, stderr, err := vsctl(t, a)
		if err != nil || stderr != "" || !strings.HasPrefix(stdout, "vscsictl, version "+buildinfo.Version()) {
			t.Errorf("%s: error %v, stdout %q, stderr %q", a, err, stdout, stderr)
		}
	}
}

func TestCreateListInspect(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, "media", "create", "--dir", dir, "--barcode", "ABC123L6", "--capacity", "100MiB",
		"--partitions", "10MiB,0", "--density", "lto6", "--early-warning", "1MiB")
	if out != "created "+filepath.Join(dir, "ABC123L6.vtape")+"\n" {
		t.Errorf("create said %q", out)
	}
	mustRun(t, "media", "create", "--dir", dir, "--barcode", "WORM1", "--worm", "--write-protect")
	if _, _, err := vsctl(t, "media", "create", "--dir", dir, "--barcode", "WORM1"); !errors.Is(err, cartridge.ErrExists) {
		t.Errorf("create again: %v", err)
	}

	out = mustRun(t, "media", "list", "--dir", dir)
	want := "BARCODE     CAPACITY        USED  PARTS  DENSITY  FLAGS\n" +
		"ABC123L6     100 MiB         0 B      2  0x5a     \n" +
		"WORM1          2 GiB         0 B      1  0x00     write-protected,worm\n"
	if out != want {
		t.Errorf("list:\n%s\nwant:\n%s", out, want)
	}
	var entries []listEntry
	if err := json.Unmarshal([]byte(mustRun(t, "media", "list", "--dir", dir, "--json")), &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Capacity != 100<<20 || entries[1].Flags[1] != "worm" {
		t.Errorf("list --json: %+v", entries)
	}

	out = mustRun(t, "media", "inspect", "--dir", dir, "--barcode", "ABC123L6")
	for _, line := range []string{
		"cartridge   ABC123L6  (" + filepath.Join(dir, "ABC123L6.vtape") + ")",
		"density     0x5a",
		"flags       none",
		"capacity    100 MiB (104857600 bytes), early warning 1 MiB",
		"partitions  2",
		"  capacity  10 MiB, early warning 1 MiB, region at offset 65536",
		"  capacity  90 MiB, early warning 1 MiB, region at offset 10551296",
		"  recovery  clean (ends where it was last synced)",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("inspect lacks %q:\n%s", line, out)
		}
	}
	var ins inspectOutput
	if err := json.Unmarshal([]byte(mustRun(t, "media", "inspect", "--dir", dir, "--barcode", "WORM1", "--json")), &ins); err != nil {
		t.Fatal(err)
	}
	if !ins.WORM || !ins.WriteProtected || len(ins.Partitions) != 1 || ins.Partitions[0].Capacity != 2<<30 {
		t.Errorf("inspect --json: %+v", ins)
	}
}

func TestMissingAndBadCartridge(t *testing.T) {
	dir := t.TempDir()
	_, _, err := vsctl(t, "media", "inspect", "--dir", dir, "--barcode", "ABC")
	if err == nil || !strings.HasPrefix(err.Error(), "media inspect: no cartridge ABC in "+dir+": ") {
		t.Errorf("missing cartridge: %v", err)
	}
	if _, _, err := vsctl(t, "media", "inspect", "--dir", dir, "--barcode", "../x"); !isUsage(err) {
		t.Errorf("path in barcode: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "JUNK.vtape"), []byte("not a cartridge"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = vsctl(t, "media", "inspect", "--dir", dir, "--barcode", "JUNK")
	if err == nil || !strings.Contains(err.Error(), "cartridge JUNK in "+dir) || !errors.Is(err, tape.ErrCorrupt) {
		t.Errorf("junk cartridge: %v", err)
	}
	out := mustRun(t, "media", "list", "--dir", dir)
	if !strings.Contains(out, "JUNK      error: ") {
		t.Errorf("list with a junk file:\n%s", out)
	}
}

// tapFile writes a SIMH image: a label, a filemark, 5 blocks, an odd
// block, and two filemarks.
func tapFile(t *testing.T, padded bool) (string, []byte) {
	var b []byte
	rec := func(d []byte) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d)))
		b = append(b, d...)
		if padded && len(d)%2 == 1 {
			b = append(b, 0)
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d)))
	}
	fm := func() { b = binary.LittleEndian.AppendUint32(b, 0) }
	rec([]byte("VOL1" + strings.Repeat(" ", 76)))
	fm()
	for i := range 5 {
		rec(bytes.Repeat([]byte{byte(i)}, 10240))
	}
	rec([]byte("odd"))
	fm()
	fm()
	path := filepath.Join(t.TempDir(), "in.tap")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, b
}

func TestImportDumpExport(t *testing.T) {
	dir := t.TempDir()
	in, orig := tapFile(t, true)
	// flags after the file name work too
	out := mustRun(t, "media", "import", in, "--dir", dir, "--barcode", "IMP1", "--capacity", "64MiB")
	if out != "imported "+in+" into IMP1: 7 blocks (50.1 KiB), 3 filemarks, format simh\n" {
		t.Errorf("import said %q", out)
	}
	out = mustRun(t, "media", "dump", "--dir", dir, "--barcode", "IMP1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 11 {
		t.Fatalf("dump:\n%s", out)
	}
	for i, want := range map[int]string{
		1:  "   0          0        0      0 block           80        80 -                   65536 ok",
		2:  "   0          1        0      0 filemark         0         0 -                   65680 -",
		8:  "   0          7        1      0 block            3         3 -                  117264 ok",
		10: "   0          9        2      0 filemark         0         0 -                  117395 -",
	} {
		if lines[i] != want {
			t.Errorf("dump line %d:\n%q\nwant\n%q", i, lines[i], want)
		}
	}
	var dl dumpLine
	first := strings.SplitN(mustRun(t, "media", "dump", "--dir", dir, "--barcode", "IMP1", "--json"), "\n", 2)[0]
	if err := json.Unmarshal([]byte(first), &dl); err != nil || dl.Kind != "block" || dl.Length != 80 || dl.CRC != "ok" {
		t.Errorf("dump --json first line %q: %+v %v", first, dl, err)
	}
	out = mustRun(t, "media", "inspect", "--dir", dir, "--barcode", "IMP1")
	if !strings.Contains(out, "    file 1     object 2        6 blocks, 50 KiB (filemark)\n") {
		t.Errorf("inspect files:\n%s", out)
	}

	exp := filepath.Join(t.TempDir(), "out.tap")
	mustRun(t, "media", "export", "--dir", dir, "--barcode", "IMP1", exp)
	if got, _ := os.ReadFile(exp); !bytes.Equal(got, orig) {
		t.Error("export differs from the imported file")
	}
	if _, _, err := vsctl(t, "media", "export", "--dir", dir, "--barcode", "IMP1", exp); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("export over an existing file: %v", err)
	}
	mustRun(t, "media", "export", "--dir", dir, "--barcode", "IMP1", "--format", "e11", "--force", exp)
	_, unpadded := tapFile(t, false)
	if got, _ := os.ReadFile(exp); !bytes.Equal(got, unpadded) {
		t.Error("e11 export is not the unpadded image")
	}
	if entries, _ := os.ReadDir(filepath.Dir(exp)); len(entries) != 1 {
		t.Errorf("export left %d files", len(entries))
	}
}

func TestImportFailureRemovesCartridge(t *testing.T) {
	dir := t.TempDir()
	_, orig := tapFile(t, true)
	bad := filepath.Join(t.TempDir(), "bad.tap")
	if err := os.WriteFile(bad, orig[:len(orig)-30], 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := vsctl(t, "media", "import", "--dir", dir, "--barcode", "BAD1", bad)
	if err == nil || !strings.Contains(err.Error(), "offset") || !strings.Contains(err.Error(), "cartridge BAD1 does not exist") ||
		strings.Contains(err.Error(), ": EOF") {
		t.Errorf("import of a truncated file: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the failed import left %v in the media directory", entries)
	}
	if _, _, err := vsctl(t, "media", "import", "--dir", dir, "--barcode", "X", "--format", "tpc", bad); !isUsage(err) {
		t.Errorf("bad format: %v", err)
	}
	if _, _, err := vsctl(t, "media", "import", "--dir", dir, "--barcode", "X"); !isUsage(err) {
		t.Errorf("no file: %v", err)
	}
}

func TestImportWriteProtected(t *testing.T) {
	dir := t.TempDir()
	in, _ := tapFile(t, true)
	mustRun(t, "media", "import", "--dir", dir, "--barcode", "WP1", "--write-protect", in)
	m, err := cartridge.Open(dir, "WP1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if !m.Info().WriteProtected || m.Used(0) == 0 {
		t.Errorf("imported write-protected: %+v used %d", m.Info(), m.Used(0))
	}
}

func TestSetAndInUse(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "media", "create", "--dir", dir, "--barcode", "S1")
	if _, _, err := vsctl(t, "media", "set", "--dir", dir, "--barcode", "S1"); !isUsage(err) {
		t.Errorf("set nothing: %v", err)
	}
	mustRun(t, "media", "set", "--dir", dir, "--barcode", "S1", "--write-protect")
	if out := mustRun(t, "media", "inspect", "--dir", dir, "--barcode", "S1"); !strings.Contains(out, "flags       write-protected\n") {
		t.Errorf("after set:\n%s", out)
	}
	mustRun(t, "media", "set", "--dir", dir, "--barcode", "S1", "--write-protect=no")

	// A cartridge loaded in a drive (locked) is reported, not read.
	m, err := cartridge.Open(dir, "S1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if out := mustRun(t, "media", "list", "--dir", dir); !strings.Contains(out, "S1        in use\n") {
		t.Errorf("list while loaded:\n%s", out)
	}
	if _, _, err := vsctl(t, "media", "inspect", "--dir", dir, "--barcode", "S1"); !errors.Is(err, cartridge.ErrInUse) {
		t.Errorf("inspect while loaded: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"4096": 4096, "2GiB": 2 << 30, "2G": 2 << 30, "2gib": 2 << 30, "1.5M": 3 << 19, "500MB": 500e6,
		"1T": 1 << 40, "16 MiB": 16 << 20, "0": 0, "10KB": 10000, "3B": 3,
	} {
		if got, err := parseSize(in); got != want || err != nil {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "G", "-1", "1.5", "2XB", "1e30", "NaN", "0.1K", "1e3", "0x10", "+5", "1_000"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 2 << 30: "2 GiB", 100 << 20: "100 MiB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
	var d densityFlag
	for in, want := range map[string]uint8{"lto6": 0x5A, "LTO-9": 0x60, "ltom8": 0x5D, "lto10": 0x62, "lto10p": 0x63, "lto1": 0x40,
		"60F": 0x57, "e07": 0x54, "T10000D": 0x4d, "sdlt600": 0x4a, "dat72": 0x47, "0x42": 0x42, "88": 88, "010": 10} {
		if err := d.Set(in); err != nil || uint8(d) != want {
			t.Errorf("density %q: %#x %v", in, uint8(d), err)
		}
	}
	if err := d.Set("lto11"); err == nil {
		t.Error("lto11 accepted")
	}
	var p partitionsFlag
	if err := p.Set("1GiB,0"); err != nil || len(p) != 2 || p[0] != 1<<30 || p[1] != 0 {
		t.Errorf("partitions: %v %v", p, err)
	}
	if err := p.Set("1,2,3,4,5"); err == nil {
		t.Error("5 partitions accepted")
	}
}

func TestDumpReportsBadChecksum(t *testing.T) {
	dir := t.TempDir()
	in, _ := tapFile(t, true)
	mustRun(t, "media", "import", "--dir", dir, "--barcode", "C1", in)
	f, err := os.OpenFile(cartridge.Path(dir, "C1"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xAA}, 76048+64+100); err != nil { // inside object 3's data
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := vsctl(t, "media", "dump", "--dir", dir, "--barcode", "C1")
	if err == nil || err.Error() != "media dump: 1 blocks do not match their checksum" {
		t.Errorf("dump of a damaged cartridge: %v", err)
	}
	if !strings.Contains(out, "   0          3        1      0 block        10240     10240 -                   76048 tape: image corrupt: partition 0 object 3: block data checksum mismatch\n") {
		t.Errorf("dump:\n%s", out)
	}
}

// TestDumpShowsCompression: dump and inspect tell compressed blocks from
// plain ones and give what they take in the image.
func TestDumpShowsCompression(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "media", "create", "--dir", dir, "--barcode", "Z1", "--capacity", "8MiB")
	m, err := cartridge.Open(dir, "Z1")
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 64<<10)
	for _, compress := range []bool{true, false} {
		if _, err := m.WriteBlock(bytes.NewReader(zeros), len(zeros), tape.Encoding{Compress: compress}); err != nil {
			t.Fatal(err)
		}
	}
	key, err := tape.NewKey(bytes.Repeat([]byte{9}, tape.KeySize), []byte{1, 2}, []byte("TAPE01"))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("SECRET-PLAINTEXT-SECRET-PLAINTEXT")
	if _, err := m.WriteBlock(bytes.NewReader(secret), len(secret), tape.Encoding{Compress: true, Key: key}); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, err := vsctl(t, "media", "dump", "--dir", dir, "--barcode", "Z1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"encoding":"compressed"`) || strings.Contains(lines[1], "encoding") ||
		!strings.Contains(lines[1], `"stored":65536`) || !strings.Contains(lines[0], `"length":65536`) {
		t.Errorf("dump --json:\n%s", out)
	}
	// The encrypted block: its KAD and a good CRC without the key, never
	// its data.
	if len(lines) == 3 && (!strings.Contains(lines[2], `"encoding":"encrypted"`) || !strings.Contains(lines[2], `"akad":"0102"`) ||
		!strings.Contains(lines[2], `"ukad":"`+hex.EncodeToString([]byte("TAPE01"))+`"`) || !strings.Contains(lines[2], `"crc":"ok"`)) {
		t.Errorf("encrypted block: %s", lines[2])
	}
	if strings.Contains(out, "SECRET") {
		t.Error("dump shows the plaintext")
	}
	out, _, err = vsctl(t, "media", "inspect", "--dir", dir, "--barcode", "Z1")
	if err != nil || !strings.Contains(out, "format version 2") || !strings.Contains(out, "  stored    128 KiB of data in 64.1 KiB (1 of 3 blocks compressed, ratio 2.00:1)") ||
		!strings.Contains(out, "  encrypted 1 of 3 blocks") {
		t.Errorf("inspect: %v\n%s", err, out)
	}
}

// TestExportNeverWritesThrough: the hostile-input run's cases. A FIFO, a
// device node or a symlink at the target is not replaced, even with
// --force; an existing FILE.tmp, or a symlink there pointing at a victim,
// is neither overwritten nor followed.
func TestExportNeverWritesThrough(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "media", "create", "--dir", dir, "--barcode", "BASE1", "--capacity", "8MiB")
	out := t.TempDir()
	victim := filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink where the old code put its temporary file.
	if err := os.Symlink(victim, filepath.Join(out, "new.tap.tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "other.tap.tmp"), []byte("someone's"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "media", "export", "--dir", dir, "--barcode", "BASE1", filepath.Join(out, "new.tap"))
	mustRun(t, "media", "export", "--dir", dir, "--barcode", "BASE1", filepath.Join(out, "other.tap"))
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the victim behind new.tap.tmp now holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "other.tap.tmp")); string(b) != "someone's" {
		t.Errorf("an existing other.tap.tmp was overwritten: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(out, "new.tap")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("new.tap: %v %v", fi, err)
	}
	fifo := filepath.Join(out, "fifo.tap")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(out, "link.tap")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{fifo, link, out, "/dev/null"} {
		_, _, err := vsctl(t, "media", "export", "--dir", dir, "--barcode", "BASE1", "--force", target)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("export --force over %s: %v, want a refusal", target, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
	if fi, err := os.Lstat("/dev/null"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// A crafted header barcode is printed escaped, never raw to the terminal.
func TestInspectEscapesBarcode(t *testing.T) {
	var b bytes.Buffer
	out := inspectOutput{Stat: cartridge.Stat{Barcode: "AB\x1b[2J\x07", Path: "/m/AB.vtape"}}
	if err := printInspect(&b, out, 10); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\x07") || !strings.Contains(b.String(), `cartridge   "AB\x1b[2J\a"  (/m/AB.vtape)`) {
		t.Errorf("inspect printed %q", b.String())
	}
}

// A signal (the command's context) stops an import of an endless stream:
// nothing is left in the media directory, not even a partial cartridge
// under its name.
func TestImportStopsOnSignal(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	go func() { // erase gaps for ever, until the reader is gone
		gap := bytes.Repeat([]byte{0xfe, 0xff, 0xff, 0xff}, 1024)
		for {
			if _, err := w.Write(gap); err != nil {
				_ = w.Close()
				return
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var out, errb bytes.Buffer
		done <- run(ctx, []string{"media", "import", "--dir", dir, "--barcode", "GAP1", "/dev/fd/" + strconv.Itoa(int(r.Fd()))}, &out, &errb)
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(cartridge.Path(dir, "GAP1")); !os.IsNotExist(err) {
		t.Errorf("the cartridge exists while the import runs: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("import: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the import did not stop")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the stopped import left %v in the media directory", entries)
	}
}

// A bad flag value is reported once (by main, with where the flags are
// described), not also by the flag package with the whole usage around it.
func TestFlagErrorOnce(t *testing.T) {
	_, stderr, err := vsctl(t, "media", "create", "--capacity", "lots")
	if !isUsage(err) || stderr != "" || strings.Count(err.Error(), "bad size") != 1 {
		t.Errorf("error %v, stderr %q", err, stderr)
	}
}

// The man page holds every command's and subcommand's own help, flags
// included.
func TestManPage(t *testing.T) {
	stdout, _, err := vsctl(t, "--help-man")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		names := []string{c.name}
		if c.subs != nil {
			names = nil
			for _, s := range c.subs {
				names = append(names, c.name+" "+s.name)
			}
		}
		for _, n := range names {
			if !strings.Contains(stdout, ".SS vscsictl "+strings.ReplaceAll(n, "-", `\-`)) {
				t.Errorf("man page lacks vscsictl %s", n)
			}
		}
	}
	for _, s := range []string{".TH VSCSICTL 1", ".SH SYNOPSIS", ".SH COMMANDS", ".SH EXIT STATUS", ".SH EXAMPLES", `\-\-barcode BARCODE`, `\-\-socket PATH`} {
		if !strings.Contains(stdout, s) {
			t.Errorf("man page lacks %s", s)
		}
	}
}

// The bash completion script completes commands, subcommands and each
// one's flags; run in a real bash.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, _, err := vsctl(t, "--completion-bash")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "vscsictl.bash")
	if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, want string }{
		{"vscsictl me", "media"},
		{"vscsictl media c", "create"},
		{"vscsictl media create --ba", "--barcode"},
		{"vscsictl library m", "move"},
		{"vscsictl stats tape0 --w", "--watch"},
		{"vscsictl load tape0 B", ""}, // an argument: file names (bash's default)
	} {
		words := strings.Fields(tc.line)
		prog := fmt.Sprintf(". %s; COMP_WORDS=(%s); COMP_CWORD=%d; _vscsictl; echo \"${COMPREPLY[*]}\"", f, strings.Join(words, " "), len(words)-1)
		out, err := exec.Command(bash, "-c", prog).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != tc.want {
			t.Errorf("%q: completions %q (%v), want %q", tc.line, got, err, tc.want)
		}
	}
	if _, _, err := vsctl(t, "--completion-zsh"); err != nil {
		t.Errorf("zsh: %v", err)
	}
}

// inspect of a cartridge whose records end early (the image cut inside a
// record) prints what it read and fails, as dump does.
func TestInspectDamagedCartridgeFails(t *testing.T) {
	dir := t.TempDir()
	tap, _ := tapFile(t, true)
	mustRun(t, "media", "import", "--dir", dir, "--barcode", "CUT1", tap)
	img := filepath.Join(dir, "CUT1.vtape")
	st, err := os.Stat(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, st.Size()-100); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inspect"}, {"inspect", "--json"}, {"dump"}} {
		out, _, err := vsctl(t, append(append([]string{"media"}, args...), "--dir", dir, "--barcode", "CUT1")...)
		if err == nil || isUsage(err) {
			t.Errorf("media %v of a cut cartridge: err %v", args, err)
		}
		if args[0] == "inspect" && !strings.Contains(out, "CUT1") {
			t.Errorf("media %v printed nothing before failing:\n%s", args, out)
		}
	}
}

// The media commands refuse an empty --dir and a partition the cartridge
// lacks with the same words, whichever command it is.
func TestMediaArgumentMessages(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "media", "create", "--dir", dir, "--barcode", "P1")
	out := filepath.Join(t.TempDir(), "p1.tap")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"media", "list", "--dir", ""}, "--dir is empty"},
		{[]string{"media", "inspect", "--dir", "", "--barcode", "P1"}, "--dir is empty"},
		{[]string{"media", "export", "--dir", dir, "--barcode", "P1", "--partition", "-1", out}, "--partition -1: not a partition of this cartridge (it has 1, numbered 0 to 0)"},
		{[]string{"media", "export", "--dir", dir, "--barcode", "P1", "--partition", "1", out}, "--partition 1: not a partition of this cartridge"},
		{[]string{"media", "dump", "--dir", dir, "--barcode", "P1", "--partition", "3"}, "--partition 3: not a partition of this cartridge"},
		{[]string{"media", "set", "--dir", dir, "--barcode", "P1", "--write-protect=maybe"}, `"maybe" is not a boolean`},
		{[]string{"media", "export", "--dir", dir, "--barcode", "P1", filepath.Join(dir, "none", "p1.tap")}, "export to " + filepath.Join(dir, "none", "p1.tap") + ":"},
	} {
		_, _, err := vsctl(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
