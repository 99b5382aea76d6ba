package systemd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// systemd's file-descriptor store (FDSTORE=1 in sd_notify(3),
// FileDescriptorStoreMax= in systemd.service(5)): the service manager
// keeps files the service gives it, under a name, and passes them back
// to the next process of the unit at its start (LISTEN_FDS,
// LISTEN_FDNAMES). It keeps them while the unit runs or has a job queued,
// so across a restart (systemctl restart, a package upgrade's restart,
// Restart=on-failure), and drops them when the unit stops. The daemon
// uses it to carry state that lives only in its memory (a RAM store
// disk's data) across a planned restart: the state is written into a
// memory file (memfd_create(2), as systemd's documentation recommends),
// which costs no disk and leaves nothing behind when the unit stops.

// listenFDsStart is SD_LISTEN_FDS_START: the first file descriptor
// systemd passes.
const listenFDsStart = 3

// An FDStore is the unit's file-descriptor store as this process sees
// it: the files the previous process kept, and a way to keep files for
// the next.
//
// Concurrency: its methods may be called from any goroutine.
type FDStore struct {
	mu   sync.Mutex
	kept map[string]*os.File
}

// OpenFDStore takes the files systemd passed this process at start,
// by name, and asks systemd to forget them: they are this process's now,
// to Take, and a later Keep under the same name does not add a second.
// Call it once, early, before anything else opens files: it reads and
// unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES. Outside systemd it
// returns an empty store. Files passed under no name, under a name given
// twice, or whose forgetting systemd refused are closed; the error says
// which.
func OpenFDStore() (*FDStore, error) {
	defer func() {
		for _, v := range []string{"LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"} {
			_ = os.Unsetenv(v) // never fails for a valid name
		}
	}()
	return openFDStore(os.Getenv, os.Getpid(), listenFDsStart)
}

// openFDStore is OpenFDStore reading the environment through getenv, for
// process pid, whose passed files start at descriptor first.
func openFDStore(getenv func(string) string, pid, first int) (*FDStore, error) {
	s := &FDStore{kept: map[string]*os.File{}}
	if p, err := strconv.Atoi(getenv("LISTEN_PID")); err != nil || p != pid {
		return s, nil // not for this process (inherited), or not passed at all
	}
	n, err := strconv.Atoi(getenv("LISTEN_FDS"))
	if err != nil || n <= 0 {
		return s, nil
	}
	names := strings.Split(getenv("LISTEN_FDNAMES"), ":")
	var errs []error
	for i := range n {
		name := ""
		if i < len(names) {
			name = names[i]
		}
		unix.CloseOnExec(first + i) // for this process alone, not a child's
		f := os.NewFile(uintptr(first+i), name)
		switch _, dup := s.kept[name]; {
		case name == "" || name == "unknown" || name == "stored":
			// Unnamed, or named by systemd: not one of ours.
			errs = append(errs, fmt.Errorf("fd store: closed the unnamed file descriptor %d", first+i))
			_ = f.Close()
		case dup:
			errs = append(errs, fmt.Errorf("fd store: closed a second file named %q", name))
			_ = f.Close()
		default:
			s.kept[name] = f
		}
	}
	for name := range s.kept {
		if err := Notify("FDSTOREREMOVE=1", "FDNAME="+name); err != nil {
			errs = append(errs, fmt.Errorf("fd store: forget %q: %w", name, err))
		}
	}
	return s, errors.Join(errs...)
}

// Take returns the file the previous process kept under name, positioned
// at its start, and forgets it; nil if there is none. The caller closes
// it.
func (s *FDStore) Take(name string) io.ReadCloser {
	s.mu.Lock()
	f, ok := s.kept[name]
	delete(s.kept, name)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		_ = f.Close() // not a file that can be read again: nothing to give
		return nil
	}
	return f
}

// Release closes the files nobody took and returns their names.
func (s *FDStore) Release() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n, f := range s.kept {
		_ = f.Close() // read-only use: nothing to lose
		names = append(names, n)
	}
	clear(s.kept)
	return names
}

// Keep writes what save writes into a new memory file and gives the file
// to systemd to keep under name for the next process of the unit. It
// fails outside systemd, and when systemd cannot be told; systemd itself
// drops the file, saying so in its own log, when the unit allows no
// stored files (FileDescriptorStoreMax=0, the default).
func (s *FDStore) Keep(name string, save func(io.Writer) error) error {
	if err := checkFDName(name); err != nil {
		return err
	}
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return errors.New("fd store: not run by systemd (no NOTIFY_SOCKET)")
	}
	f, err := memFile(name)
	if err != nil {
		return fmt.Errorf("fd store: %w", err)
	}
	defer func() { _ = f.Close() }() // systemd holds its own copy once sent
	w := bufio.NewWriterSize(f, 1<<20)
	if err := save(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("fd store: write %s: %w", name, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("fd store: %w", err)
	}
	// FDPOLL=0: a memory file cannot be polled (systemd ≥ 246 reads it;
	// older ones accept such files since 234 anyway).
	return sendFiles(addr, "FDSTORE=1\nFDPOLL=0\nFDNAME="+name, f)
}

// checkFDName checks a name as systemd requires of FDNAME: 1 to 255
// printable ASCII characters other than ':' (LISTEN_FDNAMES separates
// names with it).
func checkFDName(name string) error {
	ok := len(name) >= 1 && len(name) <= 255
	for i := 0; ok && i < len(name); i++ {
		ok = name[i] > ' ' && name[i] < 0x7f && name[i] != ':'
	}
	if !ok {
		return fmt.Errorf("fd store: %q is not a file name systemd keeps: want 1-255 printable ASCII characters, no ':' or space", name)
	}
	return nil
}
