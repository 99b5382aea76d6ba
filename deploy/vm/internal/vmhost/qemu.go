package vmhost

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// QemuBase is the start of every guest's qemu command: TCG on every host
// thread, the host's CPU model as far as TCG has it, no default devices.
func QemuBase(memory string) []string {
	return []string{
		"qemu-system-x86_64", "-accel", "tcg,thread=multi", "-cpu", "max", "-smp", SMP(), "-m", memory,
		"-nodefaults", "-display", "none", "-no-reboot",
	}
}

// Guest is one qemu running a guest whose serial ports are files of Dir:
// console.log (ttyS0), results.log (ttyS1) and what the caller names for
// ttyS2.
type Guest struct {
	Dir   string
	Limit int // wall seconds before SIGTERM, then SIGKILL 10 s later (0: none)

	cmd      *exec.Cmd
	done     chan struct{}
	timedOut bool
}

// WriteCommand saves the qemu command line, quoted for a shell, as
// dir/qemu.cmd: how to boot the same guest by hand.
func WriteCommand(dir string, argv []string) error {
	var b strings.Builder
	for _, a := range argv {
		b.WriteString(shellQuote(a))
		b.WriteByte(' ')
	}
	b.WriteByte('\n')
	return os.WriteFile(dir+"/qemu.cmd", []byte(b.String()), 0o644)
}

func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=+,.:/@%", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// StartGuest starts argv (a qemu command) in the background: stdin
// /dev/null, its own output in dir/qemu.out, the console and results
// files created empty first (so that a reader can follow them at once).
func StartGuest(dir string, argv []string, limit int) (*Guest, error) {
	if err := WriteCommand(dir, argv); err != nil {
		return nil, err
	}
	for _, f := range []string{"console.log", "results.log"} {
		if err := os.WriteFile(dir+"/"+f, nil, 0o644); err != nil {
			return nil, err
		}
	}
	out, err := os.Create(dir + "/qemu.out")
	if err != nil {
		return nil, err
	}
	g := &Guest{Dir: dir, Limit: limit, done: make(chan struct{})}
	g.cmd = exec.Command(argv[0], argv[1:]...)
	g.cmd.Stdout, g.cmd.Stderr = out, out
	if err := g.cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("starting qemu: %w", err)
	}
	go func() {
		_ = g.cmd.Wait()
		_ = out.Close()
		close(g.done)
	}()
	if limit > 0 {
		go g.watchdog(time.Duration(limit) * time.Second)
	}
	return g, nil
}

// watchdog stops a guest that outlives its limit: SIGTERM, and SIGKILL
// 10 s later if qemu is still there (as timeout -k 10 did).
func (g *Guest) watchdog(limit time.Duration) {
	select {
	case <-g.done:
		return
	case <-time.After(limit):
	}
	g.timedOut = true
	_ = g.cmd.Process.Signal(unix.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
	}
}

// Done is closed when qemu has exited.
func (g *Guest) Done() <-chan struct{} { return g.done }

// Kill stops qemu at once (SIGKILL): the power cut.
func (g *Guest) Kill() {
	_ = g.cmd.Process.Kill()
}

// Wait waits for qemu and tells how it ended.
func (g *Guest) Wait() Exit {
	<-g.done
	code := g.cmd.ProcessState.ExitCode()
	return Exit{Code: code, TimedOut: g.timedOut, Limit: g.Limit}
}

// Follow copies the lines of file that keep (if not nil) accepts to w as
// they are written, carriage returns dropped, until done is closed; then
// it reads what is left and returns. A line is copied only once it is
// whole (or at the end), so that a reader never sees half a check.
func Follow(file string, w io.Writer, keep func(string) bool, done <-chan struct{}) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }() // read-only
	var pending []byte
	buf := make([]byte, 64<<10)
	emit := func(final bool) {
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			line := strings.TrimRight(string(pending[:i]), "\r")
			pending = pending[i+1:]
			if keep == nil || keep(line) {
				_, _ = fmt.Fprintln(w, line)
			}
		}
		if final && len(pending) > 0 {
			line := strings.TrimRight(string(pending), "\r")
			if keep == nil || keep(line) {
				_, _ = fmt.Fprintln(w, line)
			}
			pending = nil
		}
	}
	for {
		finished := false
		select {
		case <-done:
			finished = true
		default:
		}
		for {
			n, _ := f.Read(buf)
			if n == 0 {
				break
			}
			pending = append(pending, buf[:n]...)
			emit(false)
		}
		if finished {
			emit(true)
			return
		}
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ListeningTCP reports whether something listens on 127.0.0.1:port, from
// /proc/net/tcp (connecting would take a socket netdev's one connection).
func ListeningTCP(port int) bool {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return false
	}
	want := fmt.Sprintf(":%04X", port)
	for l := range bytes.Lines(b) {
		f := strings.Fields(string(l))
		// sl local_address rem_address st ...; st 0A is LISTEN.
		if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
			return true
		}
	}
	return false
}

// Show copies the guest's result lines (or, with console, its whole
// console) to w as they come, until qemu exits; the returned function
// waits for the last of them.
func (g *Guest) Show(w io.Writer, console bool) (wait func()) {
	file, keep := g.Dir+"/results.log", IsResult
	if console {
		file, keep = g.Dir+"/console.log", nil
	}
	finished := make(chan struct{})
	go func() {
		Follow(file, w, keep, g.done)
		close(finished)
	}()
	return func() { <-finished }
}
