// Package targettest is an in-memory fake of the kernel side of TCMU
// (drivers/target/target_core_user.c), for testing tcmu.Device and the
// handlers served through it without a kernel.
//
// A Kernel lays out a mapping exactly as the kernel does: the mailbox at
// offset 0 (version 2, capability flags), the command ring at cmdr_off 128
// with a size that is not a power of two, and the data area after it,
// handed out in fixed-size blocks. It writes command entries the way
// queue_cmd_ring does (entry size max(48+16·iovs, 112) plus the CDB rounded
// to 8, a PAD entry when the entry does not fit before the end of the ring,
// cmd_ids 1..65535 lowest free first, contiguous blocks merged into one
// iovec), and reaps completions the way tcmu_handle_completions does: only
// on Kick, in ring order, looking each command up by the cmd_id stored in
// the entry being reaped. A cmd_id that is not outstanding (a double
// completion) breaks the ring as it does in the kernel, and fails the test.
//
// It implements tcmu.Notifier with a channel, so a tcmu.Device serves
// it directly:
//
//	k := targettest.Serve(t, handler)
//	c := k.Submit(scsi.CDB{0x12, 0, 0, 0, 36, 0}, targettest.DataIn(36))
//	// c.Status, c.Sense, c.Data, c.ReadLen
package targettest

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/target/tcmu"
)

// AllFlags are the capabilities a current kernel advertises (OOOC,
// READ_LEN, TMR and KEEP_BUF: tcmu_configure_device sets all four).
const AllFlags = tcmu.FlagOOOC | tcmu.FlagReadLen | tcmu.FlagTMR | tcmu.FlagKeepBuf

// Config sizes a Kernel. The zero value is a 64 KiB mapping region for
// the ring (cmdr_size 65408, not a power of two) and a 4 MiB data area in
// 4 KiB blocks, with every capability flag.
type Config struct {
	RingSize  int    // cmdr_size in bytes, a multiple of 8 (default 64 KiB − 128)
	DataSize  int    // data area bytes, a multiple of BlockSize (default 4 MiB)
	BlockSize int    // data area block size (default 4096, the kernel's page-sized block)
	NoFlags   uint16 // capabilities to leave out of AllFlags, e.g. tcmu.FlagReadLen
	// NoTMRNotify leaves attrib/tmr_notification at 0: aborts are not
	// announced in the ring.
	NoTMRNotify bool
	// Stale is the byte every data block holds before the first command,
	// as a ring taken over from an earlier daemon holds what that
	// daemon's commands left. 0 is a new ring: the kernel maps zeroed
	// pages. Like the kernel, the fake never writes a Data-In block
	// itself, so a block holds whatever the last command left in it.
	Stale byte
}

// Kernel is the fake. Its methods are safe for concurrent use; Wait and
// Kick are meant for the one tcmu.Device serving it.
type Kernel struct {
	t         testing.TB
	mem       []byte
	ringSize  uint32
	dataOff   int
	blockSize int
	flags     uint16
	tmrNotify bool
	events    chan struct{}
	waiting   atomic.Int32 // Waiting: a Wait is blocked
	head      *uint32
	tail      *uint32

	mu          sync.Mutex
	cond        *sync.Cond
	lastCleaned uint32
	ring        []uint32 // len_op we wrote at ring offset 8·i (0: none), for reaping checks
	used        bitmap   // data blocks in use
	idUsed      bitmap   // cmd_ids in use
	nblocks     int
	ids         [65536]*slot
	free        []*slot
	corrupt     Corruption
	broken      error
	pads        int
	pumpDone    int
	pumpBad     int

	dev     *tcmu.Device
	devDone chan struct{}
	devErr  error
	faultOK bool
	stopped bool
}

// NewKernel returns a fake kernel with an empty ring.
func NewKernel(t testing.TB, cfg Config) *Kernel {
	t.Helper()
	if cfg.RingSize == 0 {
		cfg.RingSize = 64<<10 - mbCmdrOff
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 4096
	}
	if cfg.DataSize == 0 {
		cfg.DataSize = 4 << 20
	}
	if cfg.RingSize%8 != 0 || cfg.RingSize < 2*entryBase || cfg.DataSize%cfg.BlockSize != 0 || cfg.BlockSize%8 != 0 {
		t.Fatalf("targettest: bad Config %+v: RingSize must be a multiple of 8 and ≥ 224, DataSize a multiple of BlockSize", cfg)
	}
	dataOff := mbCmdrOff + cfg.RingSize
	// Allocate as []uint64 so the mapping is 8-byte aligned, as an mmap is.
	words := make([]uint64, (dataOff+cfg.DataSize+7)/8)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), dataOff+cfg.DataSize)
	if cfg.Stale != 0 {
		for i := range mem[dataOff:] {
			mem[dataOff+i] = cfg.Stale
		}
	}
	k := &Kernel{
		t:         t,
		mem:       mem,
		ringSize:  uint32(cfg.RingSize),
		dataOff:   dataOff,
		blockSize: cfg.BlockSize,
		flags:     AllFlags &^ cfg.NoFlags,
		tmrNotify: !cfg.NoTMRNotify,
		events:    make(chan struct{}, 1),
		head:      (*uint32)(unsafe.Pointer(&mem[mbHeadOff])),
		tail:      (*uint32)(unsafe.Pointer(&mem[mbTailOff])),
		ring:      make([]uint32, cfg.RingSize/8),
		used:      newBitmap(cfg.DataSize / cfg.BlockSize),
		idUsed:    newBitmap(65536),
		nblocks:   cfg.DataSize / cfg.BlockSize,
	}
	k.idUsed.set(0) // cmd_id 0 is never allocated
	k.cond = sync.NewCond(&k.mu)
	ne := binary.NativeEndian
	ne.PutUint16(mem[0:], tcmu.MailboxVersion)
	ne.PutUint16(mem[2:], k.flags)
	ne.PutUint32(mem[4:], mbCmdrOff)
	ne.PutUint32(mem[8:], k.ringSize)
	return k
}

// Memory is the mapping, as the device would mmap it.
func (k *Kernel) Memory() []byte { return k.mem }

// Flags are the mailbox capability flags.
func (k *Kernel) Flags() uint16 { return k.flags }

// Pads is the number of PAD entries written so far (ring wraps).
func (k *Kernel) Pads() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pads
}

// RingUsed is the number of ring bytes not yet reaped: entries the device
// has not completed (or passed) and the kernel has not reclaimed on a Kick.
func (k *Kernel) RingUsed() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := int(atomic.LoadUint32(k.head)) - int(k.lastCleaned)
	if n < 0 {
		n += int(k.ringSize)
	}
	return n
}

// Wait implements tcmu.Notifier: it returns once Notify was called since
// the previous Wait (uio event counter semantics: notifications coalesce).
func (k *Kernel) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-k.events:
		return nil
	default:
	}
	k.waiting.Add(1)
	defer k.waiting.Add(-1)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-k.events:
		return nil
	}
}

// Waiting reports that the device is blocked in Wait with no
// notification pending: a test sees by it that a device stopped polling.
func (k *Kernel) Waiting() bool { return k.waiting.Load() > 0 }

// Kick implements tcmu.Notifier: the kernel reaps completions.
func (k *Kernel) Kick() error {
	k.mu.Lock()
	k.reapLocked()
	k.mu.Unlock()
	k.cond.Broadcast()
	return nil
}

// Notify signals the device that entries were queued (uio_event_notify).
func (k *Kernel) Notify() {
	select {
	case k.events <- struct{}{}:
	default:
	}
}

// CorruptNextEntry makes the next queued command entry invalid in the way
// c describes.
func (k *Kernel) CorruptNextEntry(c Corruption) {
	k.mu.Lock()
	k.corrupt = c
	k.mu.Unlock()
}

// Serve starts a device for h over a new Kernel with the default Config.
func Serve(t testing.TB, h tcmu.Handler) *Kernel {
	t.Helper()
	k := NewKernel(t, Config{})
	k.Serve(h)
	return k
}

// Serve starts a tcmu.Device serving h on k in a new goroutine and stops
// it at the end of the test. A device failure fails the test unless
// WaitFailed was called. It logs through zaptest at Info level.
func (k *Kernel) Serve(h tcmu.Handler) *tcmu.Device {
	k.t.Helper()
	return k.ServeLogger(h, zaptest.NewLogger(k.t, zaptest.Level(zap.InfoLevel)))
}

// ServeLogger is Serve with a given logger (zap.NewNop() for benchmarks).
func (k *Kernel) ServeLogger(h tcmu.Handler, log *zap.Logger) *tcmu.Device {
	k.t.Helper()
	d, err := tcmu.NewDevice(k.mem, k, h, log)
	if err != nil {
		k.t.Fatalf("targettest: NewDevice: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.dev = d
	k.devDone = make(chan struct{})
	go func() {
		err := d.Run(ctx)
		k.mu.Lock()
		k.devErr, k.stopped = err, true
		k.mu.Unlock()
		k.cond.Broadcast()
		close(k.devDone)
	}()
	k.t.Cleanup(func() {
		cancel()
		<-k.devDone
		k.mu.Lock()
		err, ok := k.devErr, k.faultOK
		k.mu.Unlock()
		if err != nil && !ok {
			k.t.Errorf("targettest: device failed: %v", err)
		}
	})
	return d
}

// Device is the device Serve started.
func (k *Kernel) Device() *tcmu.Device { return k.dev }

func (k *Kernel) deviceStats() any {
	if k.dev == nil {
		return nil
	}
	return k.dev.Stats()
}

// WaitFailed waits up to timeout for the served device to stop on its own
// and returns its error; a device failure is then expected and does not
// fail the test. It fails the test if the device is still running.
func (k *Kernel) WaitFailed(timeout time.Duration) error {
	k.t.Helper()
	k.mu.Lock()
	k.faultOK = true
	k.mu.Unlock()
	select {
	case <-k.devDone:
	case <-time.After(timeout):
		k.t.Fatalf("targettest: device still running after %v", timeout)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.devErr
}
