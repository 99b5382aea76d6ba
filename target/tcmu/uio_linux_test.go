//go:build linux

package tcmu

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A pipe stands in for /dev/uioN: like the uio device it is pollable,
// stays readable once written (Wait never reads the uio event counter),
// and each write wakes its waiters, as each uio_event_notify does.
func pipeUIO(t *testing.T) (*uio, *os.File) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	u, err := newUIO(p[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	w := os.NewFile(uintptr(p[1]), "pipe")
	t.Cleanup(func() { _ = u.Close(); _ = w.Close() })
	return u, w
}

func TestUIOWaitWakesOnEvent(t *testing.T) {
	u, w := pipeUIO(t)
	done := make(chan error)
	go func() { done <- u.Wait(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("Wait returned before any event: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	_, _ = w.Write([]byte{1, 0, 0, 0})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Wait never reads the event counter, so the uio descriptor stays
// readable after the first notification: Wait must return once per new
// notification (edge), neither spin on the readable descriptor nor lose a
// notification that came while nobody waited.
func TestUIOWaitOncePerNotification(t *testing.T) {
	u, w := pipeUIO(t)
	ev := []byte{1, 0, 0, 0}
	_, _ = w.Write(ev) // before any Wait
	_, _ = w.Write(ev) // coalesces with the first, as uio notifications do
	if err := u.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		done := make(chan error)
		go func() { done <- u.Wait(context.Background()) }()
		select {
		case err := <-done:
			t.Fatalf("wait %d returned with no new notification (%v): the readable descriptor makes it spin", i, err)
		case <-time.After(20 * time.Millisecond):
		}
		_, _ = w.Write(ev)
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("wait %d missed a notification", i)
		}
	}
}

func TestUIOWaitCancelled(t *testing.T) {
	u, _ := pipeUIO(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- u.Wait(ctx) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the context did not wake Wait")
	}
	if err := u.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on a cancelled context: %v", err)
	}
	u.stop()
}

func TestUIOWaitAllocatesNothing(t *testing.T) {
	u, w := pipeUIO(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := []byte{1, 0, 0, 0}
	_, _ = w.Write(ev)
	_ = u.Wait(ctx) // installs the cancellation watch once
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = w.Write(ev)
		if err := u.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Wait allocates %v per call", allocs)
	}
	u.stop()
}

func TestUIOKickWritesFourBytes(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(p[0]), "pipe")
	defer func() { _ = r.Close() }()
	u, err := newUIO(p[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = u.Close() }()
	if err := u.Kick(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	if n, err := r.Read(b); n != 4 || err != nil {
		t.Fatalf("read %d bytes, %v", n, err)
	}
}

func TestOpenUIOMapsAndUnmaps(t *testing.T) {
	p := filepath.Join(t.TempDir(), "uio0")
	if err := os.WriteFile(p, make([]byte, 2*4096), 0o600); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenUIO(p, 2*4096)
	if err != nil {
		t.Fatal(err)
	}
	mem := rd.Memory()
	if len(mem) != 2*4096 {
		t.Fatalf("mapped %d bytes", len(mem))
	}
	mem[4096] = 0x5a // MAP_SHARED: the write reaches the file
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if b[4096] != 0x5a {
		t.Error("mapping was not shared")
	}
	if _, err := OpenUIO(filepath.Join(t.TempDir(), "missing"), 4096); err == nil {
		t.Error("opened a missing device")
	}
}

// A context cancelled while Wait is blocked wakes it; the next Wait, on a
// new context, must not return at once because of the old wake-up.
func TestUIOWaitIgnoresAnEarlierContextsWakeup(t *testing.T) {
	u, w := pipeUIO(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- u.Wait(ctx) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v, want context.Canceled", err)
	}
	go func() { done <- u.Wait(context.Background()) }()
	select {
	case err := <-done:
		t.Fatalf("Wait on a new context returned before any event: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	_, _ = w.Write([]byte{1, 0, 0, 0})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A hung-up device (the kernel unregistered it) is an error, not a spin.
func TestUIOWaitReportsHangup(t *testing.T) {
	u, w := pipeUIO(t)
	_ = w.Close()
	done := make(chan error)
	go func() { done <- u.Wait(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, unix.EIO) {
			t.Fatalf("Wait on a hung-up device: %v, want an error wrapping EIO (what the target reads as removed)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return on a hung-up device")
	}
}
