//go:build linux

package target

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// uio is an open /dev/uioN of a TCMU device: the mapping and the doorbell
// (drivers/uio/uio.c, drivers/target/target_core_user.c).
//
// The device is served by a goroutine that blocks in poll(2) on the uio
// descriptor and an eventfd, not through the runtime's network poller:
// with the poller a wait costs a read that fails with EAGAIN, an
// epoll_wait on another thread and a goroutine hand-off before the read
// that succeeds; here it is one poll and one read on the serving thread,
// which is what a C backstore (tcmu-runner, the perf suite's floor) pays.
// The eventfd is the cancellation path: a done context writes it and the
// poll returns. The cost is one OS thread per device while it waits,
// which the runtime creates on demand.
type uio struct {
	fd   int // /dev/uioN, blocking
	efd  int // eventfd, written when the watched context is done
	mem  []byte
	pfd  [2]unix.PollFd
	rbuf [4]byte
	wbuf [4]byte
	ebuf [8]byte

	mu      sync.Mutex
	watched context.Context
	stop    func() bool
}

// openUIO opens path and maps exactly size bytes of it from offset 0: the
// kernel refuses any other length (tcmu_mmap). Only one process may have a
// TCMU uio device open (EBUSY).
func openUIO(path string, size int) (ringDev, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open uio %s: %w", path, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("mmap %d bytes of %s: %w", size, path, err)
	}
	u, err := newUIO(fd, mem)
	if err != nil {
		_ = unix.Munmap(mem)
		_ = unix.Close(fd)
		return nil, fmt.Errorf("open uio %s: %w", path, err)
	}
	return u, nil
}

// newUIO wraps an open, blocking descriptor and its mapping; it owns both
// from then on.
func newUIO(fd int, mem []byte) (*uio, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	u := &uio{fd: fd, efd: efd, mem: mem}
	u.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	u.pfd[1] = unix.PollFd{Fd: int32(efd), Events: unix.POLLIN}
	return u, nil
}

func (u *uio) Memory() []byte { return u.mem }

// watch makes a cancellation of ctx wake a blocked Wait (once per ctx, so
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
	u.stop = context.AfterFunc(ctx, u.wake)
}

// wake makes the eventfd readable: a blocked poll returns.
func (u *uio) wake() {
	var one [8]byte
	one[0] = 1 // eventfd counters are host-endian; every Linux port vscsid builds for is little-endian
	_, _ = unix.Write(u.efd, one[:])
}

// Wait reads the 4-byte uio event counter: it returns once the kernel
// called uio_event_notify since the previous read (uio_read).
func (u *uio) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	u.watch(ctx)
	for {
		u.pfd[0].Revents, u.pfd[1].Revents = 0, 0
		if _, err := unix.Poll(u.pfd[:], -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return fmt.Errorf("poll uio: %w", err)
		}
		if u.pfd[1].Revents != 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			// A wake-up for an earlier context: consume it.
			_, _ = unix.Read(u.efd, u.ebuf[:])
		}
		if r := u.pfd[0].Revents; r&unix.POLLIN != 0 {
			break
		} else if r&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			return fmt.Errorf("poll uio: revents %#x", r)
		}
	}
	for {
		n, err := unix.Read(u.fd, u.rbuf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read uio event: %w", err)
		}
		if n != len(u.rbuf) {
			return fmt.Errorf("read uio event: %d bytes", n)
		}
		return nil
	}
}

// Kick writes 4 bytes: tcmu_irqcontrol reaps the completions up to
// cmd_tail and retries commands waiting for ring space.
func (u *uio) Kick() error {
	for {
		_, err := unix.Write(u.fd, u.wbuf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write uio: %w", err)
		}
		return nil
	}
}

// Close unmaps the ring and closes the device. The device loop must have
// stopped (its context done, Run returned): touching the mapping
// afterwards faults, and a Wait still blocked would poll closed
// descriptors.
func (u *uio) Close() error {
	u.mu.Lock()
	if u.stop != nil {
		u.stop()
		u.stop = nil
	}
	u.mu.Unlock()
	var err error
	if u.mem != nil {
		err = unix.Munmap(u.mem)
		u.mem = nil
	}
	return errors.Join(err, unix.Close(u.fd), unix.Close(u.efd))
}
