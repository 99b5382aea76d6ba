//go:build linux

package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// uio is an open /dev/uioN of a TCMU device: the mapping and the doorbell
// (drivers/uio/uio.c, drivers/target/target_core_user.c).
//
// The file is opened with os.OpenFile, which registers a character device
// with the runtime poller (uio implements poll) and makes it non-blocking:
// a Read parks the goroutine instead of a thread, and a read deadline or
// Close wakes it. The descriptor is reached through SyscallConn only; Fd
// would switch it back to blocking mode and disable deadlines.
type uio struct {
	f    *os.File
	mem  []byte
	rbuf [4]byte
	wbuf [4]byte

	mu      sync.Mutex
	watched context.Context
	stop    func() bool
}

// aLongTimeAgo is a read deadline in the past: it wakes a blocked Read.
var aLongTimeAgo = time.Unix(1, 0)

// openUIO opens path and maps exactly size bytes of it from offset 0: the
// kernel refuses any other length (tcmu_mmap). Only one process may have a
// TCMU uio device open (EBUSY).
func openUIO(path string, size int) (ringDev, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open uio: %w", err)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open uio %s: %w", path, err)
	}
	var mem []byte
	var merr error
	if err := rc.Control(func(fd uintptr) {
		mem, merr = unix.Mmap(int(fd), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	}); err != nil {
		merr = err
	}
	if merr != nil {
		_ = f.Close()
		return nil, fmt.Errorf("mmap %d bytes of %s: %w", size, path, merr)
	}
	return &uio{f: f, mem: mem}, nil
}

func (u *uio) Memory() []byte { return u.mem }

// watch makes a cancellation of ctx wake a blocked Read (once per ctx, so
// Wait allocates nothing in steady state).
func (u *uio) watch(ctx context.Context) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.watched == ctx {
		return
	}
	if u.stop != nil {
		u.stop()
	}
	u.watched = ctx
	u.stop = context.AfterFunc(ctx, func() { _ = u.f.SetReadDeadline(aLongTimeAgo) })
}

// Wait reads the 4-byte uio event counter: it returns once the kernel
// called uio_event_notify since the previous read (uio_read).
func (u *uio) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	u.watch(ctx)
	n, err := u.f.Read(u.rbuf[:])
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("read uio event: %w", err)
	}
	if n != len(u.rbuf) {
		return fmt.Errorf("read uio event: %d bytes", n)
	}
	return nil
}

// Kick writes 4 bytes: tcmu_irqcontrol reaps the completions up to
// cmd_tail and retries commands waiting for ring space.
func (u *uio) Kick() error {
	if _, err := u.f.Write(u.wbuf[:]); err != nil {
		return fmt.Errorf("write uio: %w", err)
	}
	return nil
}

// Close unmaps the ring and closes the device; a blocked Wait returns.
// The device loop must have stopped: touching the mapping afterwards
// faults.
func (u *uio) Close() error {
	u.mu.Lock()
	if u.stop != nil {
		u.stop()
		u.stop = nil
	}
	u.mu.Unlock()
	err := unix.Munmap(u.mem)
	u.mem = nil
	return errors.Join(err, u.f.Close())
}
