//go:build linux

package tcmu

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
// The device is served by a goroutine that blocks in epoll_wait(2), not
// through the runtime's network poller: with the poller a wait costs a
// read that fails with EAGAIN, an epoll_wait on another thread and a
// goroutine hand-off before the read that succeeds. The uio descriptor is
// in the epoll set edge-triggered, and its event counter is never read:
// uio_event_notify wakes the device's wait queue once per notification,
// which is one edge, so a wait is that one system call, as a C backstore's
// blocking read(2) is (tcmu-runner, the perf suite's floor); a poll(2)
// and the read(2) that consumes the counter would be two. A notification
// that comes while the loop is serving is queued on the epoll set and the
// next wait returns at once. The eventfd, level-triggered in the same set,
// is the cancellation path: a done context writes it and the wait
// returns. The cost is one OS thread per device while it waits, which the
// runtime creates on demand.
type uio struct {
	fd    int // /dev/uioN, blocking
	efd   int // eventfd, written when the watched context is done
	epfd  int // epoll set of fd (edge-triggered) and efd, filled at the first Wait (armed)
	mem   []byte
	evs   [2]unix.EpollEvent
	wbuf  [4]byte
	ebuf  [8]byte
	armed bool // fd and efd are in epfd

	mu      sync.Mutex
	watched context.Context
	stop    func() bool
}

// OpenUIO opens the TCMU device's uio node path and maps exactly size
// bytes of it from offset 0: the kernel refuses any other length
// (tcmu_mmap). Only one process may have a TCMU uio device open (EBUSY).
func OpenUIO(path string, size int) (UIO, error) {
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
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		_ = unix.Close(efd)
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	return &uio{fd: fd, efd: efd, epfd: epfd, mem: mem}, nil
}

// arm puts the descriptors into the epoll set. It runs at the first Wait,
// not at open: a uio descriptor always polls, but what openUIO is given in
// tests (a plain file) does not. An event that came before it is not
// lost: adding the descriptor polls it, and uio_poll reports readable
// while any notification since the open is unread, which with the counter
// never read is after the first one (one early wake-up, then edges only).
func (u *uio) arm() error {
	if err := unix.EpollCtl(u.epfd, unix.EPOLL_CTL_ADD, u.fd,
		&unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(u.fd)}); err != nil {
		return fmt.Errorf("epoll_ctl add uio: %w", err)
	}
	if err := unix.EpollCtl(u.epfd, unix.EPOLL_CTL_ADD, u.efd,
		&unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(u.efd)}); err != nil {
		return fmt.Errorf("epoll_ctl add eventfd: %w", err)
	}
	u.armed = true
	return nil
}

func (u *uio) Memory() []byte { return u.mem }

// watch makes a cancellation of ctx wake a blocked Wait (once per ctx, so
// Wait allocates nothing in steady state). Only the serving goroutine
// calls it, and only it writes watched: it may read it without the lock.
func (u *uio) watch(ctx context.Context) {
	if u.watched == ctx {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stop != nil {
		u.stop()
	}
	u.watched = ctx
	u.stop = context.AfterFunc(ctx, u.wake)
}

// wake makes the eventfd readable: a blocked wait returns.
func (u *uio) wake() {
	var one [8]byte
	one[0] = 1 // eventfd counters are host-endian; every Linux port vscsid builds for is little-endian
	_, _ = unix.Write(u.efd, one[:])
}

// Wait returns once the kernel called uio_event_notify since the previous
// Wait returned (a new edge on the uio descriptor), or ctx is done.
func (u *uio) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !u.armed {
		if err := u.arm(); err != nil {
			return err
		}
	}
	u.watch(ctx)
	for {
		n, err := unix.EpollWait(u.epfd, u.evs[:], -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait uio: %w", err)
		}
		ready := false
		for _, ev := range u.evs[:n] {
			if ev.Fd == int32(u.efd) {
				if err := ctx.Err(); err != nil {
					return err
				}
				// A wake-up for an earlier context: consume it.
				_, _ = unix.Read(u.efd, u.ebuf[:])
				continue
			}
			// uio_poll of an unregistered device returns -EIO as its mask,
			// which has the error bits (and EPOLLIN) set: check them first.
			// The error wraps EIO, as uio_read's did: the target tells a
			// device removed under it from a fault by that.
			if ev.Events&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				return fmt.Errorf("epoll_wait uio: events %#x (device gone): %w", ev.Events, unix.EIO)
			}
			ready = ev.Events&unix.EPOLLIN != 0
		}
		if ready {
			return nil
		}
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
// afterwards faults, and a Wait still blocked would wait on closed
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
	return errors.Join(err, unix.Close(u.epfd), unix.Close(u.fd), unix.Close(u.efd))
}
