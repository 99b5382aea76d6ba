//go:build linux

// Command floor is the TCMU floor of the perf suite (deploy/vm/perf): a
// backstore that completes every command at once and never touches the
// data area, so what it costs is what the transport itself costs (the ring
// round trip, the uio wake-up and kick, the kernel's copies). No TCMU
// backstore can be faster; vscsid is measured against it.
//
//	floor UIO-NAME
//
// UIO-NAME is the uio device's name as /sys/class/uio/uioN/name shows it
// (tcm-user/<hba>/<device>/<subtype>/<cfgstring>); the suite creates the
// TCMU device in configfs with nl_reply_supported=-1 (no netlink
// handshake), starts floor, then exports the device through tcm_loop. It
// answers what sd needs to attach a disk (INQUIRY, READ CAPACITY, MODE
// SENSE, TEST UNIT READY, the Block Limits and Block Device
// Characteristics VPD pages with scsi_debug's defaults) from fixed tables; READ and WRITE complete GOOD
// without a byte of data moved, like scsi_debug's fake_rw. It serves until
// SIGTERM.
//
// It restates the ring layout of include/uapi/linux/target_core_user.h
// on purpose: it is the suite's independent reference, and shares no code
// with vscsid's ring.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// include/uapi/linux/target_core_user.h
const (
	mbCmdrOff  = 4  // u32 cmdr_off
	mbCmdrSize = 8  // u32 cmdr_size
	mbHead     = 12 // u32 cmd_head
	mbTail     = 64 // u32 cmd_tail (own cache line)
	opPad      = 0
	opCmd      = 1
	uflagUnk   = 0x1 // TCMU_UFLAG_UNKNOWN_OP
	reqIovCnt  = 8
	reqCdbOff  = 24
	reqIov     = 48
	rspStatus  = 8
	rspSense   = 16
	blocks     = 1 << 19 // 256 MiB of 512-byte blocks
	blockBytes = 512
	checkCond  = 0x02
)

var ne = binary.NativeEndian

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor UIO-NAME")
		os.Exit(2)
	}
	err := run(os.Args[1]) // serves until SIGTERM, or fails
	fmt.Fprintln(os.Stderr, "floor:", err)
	os.Exit(1)
}

func findUIO(name string) (dev string, size int, err error) {
	ms, _ := filepath.Glob("/sys/class/uio/uio*/name")
	for _, m := range ms {
		b, err := os.ReadFile(m)
		if err != nil || strings.TrimSpace(string(b)) != name {
			continue
		}
		dir := filepath.Dir(m)
		s, err := os.ReadFile(filepath.Join(dir, "maps/map0/size"))
		if err != nil {
			return "", 0, err
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(s)), 0, 64)
		if err != nil {
			return "", 0, fmt.Errorf("map0 size %q: %w", s, err)
		}
		return "/dev/" + filepath.Base(dir), int(n), nil
	}
	return "", 0, fmt.Errorf("no uio device named %q", name)
}

func run(name string) error {
	dev, size, err := findUIO(name)
	if err != nil {
		return err
	}
	fd, err := unix.Open(dev, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dev, err)
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap %s: %w", dev, err)
	}
	// SIGTERM: exit between two wake-ups (the blocking read returns EINTR
	// once the handler is installed with signal.Notify).
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, unix.SIGTERM, unix.SIGINT)
	go func() { <-sig; os.Exit(0) }()

	cmdrOff := ne.Uint32(mem[mbCmdrOff:])
	cmdrSize := ne.Uint32(mem[mbCmdrSize:])
	head := (*uint32)(unsafe.Pointer(&mem[mbHead]))
	tail := (*uint32)(unsafe.Pointer(&mem[mbTail]))
	var ev [4]byte
	// A Gosched every 4 ms, as vscsid's in-order loop does: a goroutine
	// that only ever comes back from read(2) to its own P never passes
	// through the scheduler, and the runtime's monitor then preempts it
	// with a signal every 10 ms and polls every 20 µs. That is the Go
	// runtime's cost, not the transport's; a floor that paid it would not
	// be a floor.
	epoch, yielded := time.Now(), time.Duration(0)
	for {
		// Drain until cmd_head stops moving, then kick once: commands
		// queued while the batch was served go into the same batch.
		t, h := atomic.LoadUint32(tail), atomic.LoadUint32(head)
		for ; t != h; h = atomic.LoadUint32(head) {
			e := mem[cmdrOff+t:]
			lenOp := ne.Uint32(e)
			n := lenOp &^ 7
			if n == 0 || n > cmdrSize {
				return fmt.Errorf("ring entry at %d: length %d", t, n)
			}
			switch lenOp & 7 {
			case opPad:
			case opCmd:
				complete(mem, e)
			default:
				e[7] = uflagUnk
			}
			t = (t + n) % cmdrSize
		}
		atomic.StoreUint32(tail, t)
		if _, err := unix.Write(fd, ev[:]); err != nil {
			return fmt.Errorf("kick: %w", err)
		}
		if now := time.Since(epoch); now-yielded >= 4*time.Millisecond {
			yielded = now
			runtime.Gosched()
		}
		if _, err := unix.Read(fd, ev[:]); err != nil && err != unix.EINTR {
			return fmt.Errorf("wait: %w", err)
		}
	}
}

var (
	inquiry = func() []byte {
		b := make([]byte, 36)
		b[2], b[3], b[4] = 6, 2, 31 // SPC-4, response data format 2
		copy(b[8:], "FLOOR   TCMU FLOOR      0001")
		return b
	}()
	vpd00 = []byte{0, 0, 0, 3, 0, 0xb0, 0xb1}
	// Block Limits: OPTIMAL TRANSFER LENGTH 1024 blocks, as scsi_debug's
	// and vscsid's defaults, so sd picks the same max_sectors_kb for all.
	vpdB0 = func() []byte {
		b := make([]byte, 64)
		b[1], b[3] = 0xb0, 0x3c
		binary.BigEndian.PutUint32(b[12:], 1024)
		return b
	}()
	// Block Device Characteristics: MEDIUM ROTATION RATE 1, non-rotating.
	vpdB1 = func() []byte {
		b := make([]byte, 64)
		b[1], b[3], b[5] = 0xb1, 0x3c, 1
		return b
	}()
	// MODE SENSE(6) header only: no block descriptor, no pages (sd then
	// assumes a write-through cache).
	modeSense6  = []byte{3, 0, 0, 0}
	modeSense10 = []byte{0, 6, 0, 0, 0, 0, 0, 0}
	cap10       = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, blocks-1), blockBytes)
	cap16       = append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, blocks-1), blockBytes), make([]byte, 20)...)
)

// complete answers the command entry e in place.
func complete(mem, e []byte) {
	cdb := mem[ne.Uint64(e[reqCdbOff:]):]
	var data []byte
	switch cdb[0] {
	case 0x12: // INQUIRY
		switch {
		case cdb[1]&1 == 0:
			data = inquiry
		case cdb[2] == 0:
			data = vpd00
		case cdb[2] == 0xb0:
			data = vpdB0
		case cdb[2] == 0xb1:
			data = vpdB1
		default:
			invalid(e, 0x24)
			return
		}
	case 0x25: // READ CAPACITY(10)
		data = cap10
	case 0x9e: // SERVICE ACTION IN(16)
		if cdb[1]&0x1f != 0x10 {
			invalid(e, 0x24)
			return
		}
		data = cap16
	case 0x1a:
		data = modeSense6
	case 0x5a:
		data = modeSense10
	case 0x00, 0x35, 0x91, // TEST UNIT READY, SYNCHRONIZE CACHE(10/16)
		0x08, 0x28, 0xa8, 0x88, // READ(6/10/12/16): no data moved
		0x0a, 0x2a, 0xaa, 0x8a: // WRITE(6/10/12/16): no data taken
	default:
		invalid(e, 0x20) // INVALID COMMAND OPERATION CODE
		return
	}
	if data != nil { // copy into the iovecs; the kernel returns the whole buffer
		iovs := int(ne.Uint32(e[reqIovCnt:]))
		for i := range iovs {
			iv := e[reqIov+16*i:]
			base, l := ne.Uint64(iv), ne.Uint64(iv[8:])
			c := copy(mem[base:base+l], data)
			clear(mem[base+uint64(c) : base+l])
			data = data[c:]
		}
	}
	e[rspStatus] = 0
}

// invalid sets CHECK CONDITION, ILLEGAL REQUEST with asc in fixed format.
func invalid(e []byte, asc byte) {
	e[rspStatus] = checkCond
	s := e[rspSense : rspSense+18]
	clear(s)
	s[0], s[2], s[7], s[12] = 0x70, 0x05, 10, asc
}
