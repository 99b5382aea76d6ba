package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"
)

// Under systemd each line carries its level as a syslog priority prefix,
// which journald strips and journalctl -p filters on; no timestamp (the
// journal has its own).
func TestJournalFormat(t *testing.T) {
	var out bytes.Buffer
	log := newLogger(&options{logFormat: logJournal, logLevel: zapcore.DebugLevel}, &out)
	log.Named("target").Error("device failed", zap.String("device", "d0"))
	log.Warn("careful")
	log.Info("starting", zap.Int("devices", 3))
	log.Debug("command")
	want := []string{
		"<3>target\tdevice failed\t{\"device\": \"d0\"}",
		"<4>careful",
		"<6>starting\t{\"devices\": 3}",
		"<7>command",
	}
	if got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("journal lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// auto is journal only on the very stream JOURNAL_STREAM names: stderr
// redirected to a file under systemd keeps JSON.
func TestAutoFormatFindsJournalStream(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	other, err := os.Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", fmt.Sprintf("%d:%d", st.Dev, st.Ino))
	if got := resolveLogFormat(logAuto, f); got != logJournal {
		t.Errorf("auto on the journal stream: %s", got)
	}
	if got := resolveLogFormat(logAuto, other); got != logJSON {
		t.Errorf("auto on another file: %s", got)
	}
	if got := resolveLogFormat(logJSON, f); got != logJSON {
		t.Errorf("json asked for: %s", got)
	}
	if got := errorLine(f, errors.New("read config: no such file")); got != "<3>vscsid: read config: no such file" {
		t.Errorf("exit error on the journal: %q", got)
	}
	if got := errorLine(other, errors.New("x")); got != "vscsid: x" {
		t.Errorf("exit error elsewhere: %q", got)
	}
	t.Setenv("JOURNAL_STREAM", "bogus")
	if got := resolveLogFormat(logAuto, f); got != logJSON {
		t.Errorf("auto with a bad JOURNAL_STREAM: %s", got)
	}
}
