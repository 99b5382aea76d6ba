//go:build linux

package target

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A pipe stands in for /dev/uioN: like the uio device it is pollable, a
// 4-byte read waits for the other side and a write never blocks.
func pipeUIO(t *testing.T) (*uio, *os.File) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return &uio{f: r}, w
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
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	defer func() { _ = w.Close() }()
	u := &uio{f: w}
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
	rd, err := openUIO(p, 2*4096)
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
	if _, err := openUIO(filepath.Join(t.TempDir(), "missing"), 4096); err == nil {
		t.Error("opened a missing device")
	}
}
