package systemd_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/systemd"
)

// fakeManager plays systemd's side of the notify socket (listen), for
// datagrams with files.
func fakeManager(t *testing.T) *net.UnixConn {
	t.Helper()
	return listen(t, filepath.Join(t.TempDir(), "notify"))
}

// receive returns the next datagram and the files it carries.
func receive(t *testing.T, c *net.UnixConn) (string, []*os.File) {
	t.Helper()
	buf, oob := make([]byte, 4096), make([]byte, 256)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range fds {
			f := os.NewFile(uintptr(fd), "received")
			t.Cleanup(func() { _ = f.Close() })
			files = append(files, f)
		}
	}
	return string(buf[:n]), files
}

// Keep sends systemd a memory file holding what save wrote, under its
// name; a failing save sends nothing.
func TestFDStoreKeep(t *testing.T) {
	m := fakeManager(t)
	s, err := systemd.OpenFDStoreAt(func(string) string { return "" }, os.Getpid(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Keep("handover.d1", func(w io.Writer) error { _, err := io.WriteString(w, "the state"); return err }); err != nil {
		t.Fatal(err)
	}
	state, files := receive(t, m)
	if want := "FDSTORE=1\nFDPOLL=0\nFDNAME=handover.d1"; state != want || len(files) != 1 {
		t.Fatalf("got %q with %d files, want %q with 1", state, len(files), want)
	}
	b, err := io.ReadAll(files[0])
	if err != nil || string(b) != "the state" {
		t.Fatalf("the kept file holds %q (%v), want %q", b, err, "the state")
	}

	if err := s.Keep("x", func(io.Writer) error { return fmt.Errorf("save failed") }); err == nil || err.Error() != "save failed" {
		t.Fatalf("a failing save: %v", err)
	}
	for _, bad := range []string{"", "a:b", "a b", strings.Repeat("n", 256), "tab\t"} {
		if err := s.Keep(bad, func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "want 1-255") {
			t.Errorf("name %q: %v", bad, err)
		}
	}
	_ = m.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := m.Read(make([]byte, 64)); err == nil {
		t.Errorf("a refused Keep sent %d bytes", n)
	}

	t.Setenv("NOTIFY_SOCKET", "")
	if err := s.Keep("y", func(io.Writer) error { return nil }); err == nil || !strings.Contains(err.Error(), "not run by systemd") {
		t.Errorf("outside systemd: %v", err)
	}
}

// passFiles places files at consecutive descriptors from a high number,
// as systemd passes them from 3, and returns the first.
func passFiles(t *testing.T, contents ...string) int {
	t.Helper()
	const first = 200
	for i, c := range contents {
		f, err := os.CreateTemp(t.TempDir(), "kept")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(c); err != nil {
			t.Fatal(err)
		}
		if err := unix.Dup3(int(f.Fd()), first+i, unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	return first
}

// OpenFDStore takes the files passed under names, tells systemd to forget
// each, closes the ones it cannot name; Take gives each once, from its
// start; Release closes the rest.
func TestFDStoreOpen(t *testing.T) {
	m := fakeManager(t)
	first := passFiles(t, "state of d1", "state of d2", "nameless", "twin")
	env := map[string]string{
		"LISTEN_PID":     strconv.Itoa(os.Getpid()),
		"LISTEN_FDS":     "4",
		"LISTEN_FDNAMES": "handover.d1:handover.d2:unknown:handover.d1",
	}
	s, err := systemd.OpenFDStoreAt(func(k string) string { return env[k] }, os.Getpid(), first)
	if err == nil || !strings.Contains(err.Error(), "unnamed file descriptor 202") || !strings.Contains(err.Error(), `second file named "handover.d1"`) {
		t.Errorf("error: %v", err)
	}
	var forgot []string
	for range 2 {
		state, files := receive(t, m)
		if len(files) != 0 {
			t.Errorf("%q carries %d files", state, len(files))
		}
		forgot = append(forgot, state)
	}
	slices.Sort(forgot)
	if want := []string{"FDSTOREREMOVE=1\nFDNAME=handover.d1", "FDSTOREREMOVE=1\nFDNAME=handover.d2"}; !slices.Equal(forgot, want) {
		t.Errorf("told systemd %q, want %q", forgot, want)
	}
	if _, err := unix.FcntlInt(uintptr(first+2), unix.F_GETFD, 0); err == nil {
		t.Error("the unnamed descriptor is still open")
	}

	r := s.Take("handover.d1")
	if r == nil {
		t.Fatal("handover.d1 not kept")
	}
	b, _ := io.ReadAll(r)
	_ = r.Close()
	if string(b) != "state of d1" {
		t.Errorf("handover.d1 holds %q", b)
	}
	if s.Take("handover.d1") != nil || s.Take("handover.d9") != nil {
		t.Error("Take gave a file twice, or one never kept")
	}
	if got := s.Release(); !slices.Equal(got, []string{"handover.d2"}) {
		t.Errorf("Release: %q", got)
	}
	if _, err := unix.FcntlInt(uintptr(first+1), unix.F_GETFD, 0); err == nil {
		t.Error("a released descriptor is still open")
	}

	// Variables inherited from another process's start pass nothing.
	env["LISTEN_PID"] = "1"
	if s, err := systemd.OpenFDStoreAt(func(k string) string { return env[k] }, os.Getpid(), first); err != nil || len(s.Release()) != 0 {
		t.Errorf("another process's variables: kept %v", err)
	}
}
