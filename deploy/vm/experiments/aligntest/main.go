//go:build linux

// Command aligntest does one direct transfer from or to a user buffer placed
// at a chosen offset from a page boundary, for the experiment on DMA
// alignment of user buffers (alignment in deploy/vm/experiments). Built static on the host (CGO_ENABLED=0,
// the standard library and golang.org/x/sys/unix) and run inside the VM
// guest. Linux only (main_others.go says so and exits 1).
//
//	aligntest -path sd -op read -align 8 -bs 65536 -count 4 /dev/sda
//	aligntest -path st -op write -align 1 -bs 65536 -count 4 /dev/nst0
//	aligntest -path sg -op read -align 4 -bs 65536 -count 4 /dev/sg1
//
// sd: O_DIRECT read/write at offset 0 of the block device.
// st: plain read/write of one tape block per call (st decides itself
// whether to map the user pages: try_direct_io and the queue's DMA
// alignment; user space cannot see which it chose).
// sg: SG_IO READ(10)/WRITE(10) at LBA 0 with SG_FLAG_DIRECT_IO; the reply's
// info field says whether the kernel did direct I/O or copied.
//
// Prints one line, "ok: ..." or "error: ...", and exits 0 or 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/sgio"
)

func main() {
	path := flag.String("path", "sd", "sd (O_DIRECT), st (tape read/write) or sg (SG_IO direct I/O)")
	op := flag.String("op", "read", "read or write")
	align := flag.Int("align", 4096, "buffer offset from a page boundary: 4096 means page aligned, else 0 < align < 4096")
	bs := flag.Int("bs", 65536, "bytes per call (a multiple of 512 for sd and sg)")
	count := flag.Int("count", 4, "calls")
	flag.Parse()
	if flag.NArg() != 1 || (*op != "read" && *op != "write") || *align < 1 || *align > 4096 || *bs < 1 || *count < 1 {
		fmt.Fprintln(os.Stderr, "usage: aligntest -path sd|st|sg -op read|write -align N -bs N -count N DEVICE")
		os.Exit(2)
	}
	off := *align % 4096 // 4096 → page aligned
	mem, err := unix.Mmap(-1, 0, *bs+8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		fail("mmap", err)
	}
	buf := mem[off : off+*bs]
	for i := range buf {
		buf[i] = byte(i)
	}
	what := fmt.Sprintf("%d x %d bytes %s via %s, buffer at page+%d", *count, *bs, *op, *path, off)
	switch *path {
	case "sd", "st":
		flags := unix.O_RDONLY
		if *op == "write" {
			flags = unix.O_WRONLY
		}
		if *path == "sd" {
			flags |= unix.O_DIRECT
		}
		fd, err := unix.Open(flag.Arg(0), flags, 0)
		if err != nil {
			fail("open", err)
		}
		for i := 0; i < *count; i++ {
			var n int
			if *op == "read" {
				n, err = unix.Read(fd, buf)
			} else {
				n, err = unix.Write(fd, buf)
			}
			if err != nil {
				fail(fmt.Sprintf("%s %d of %d", *op, i+1, *count), err)
			}
			if n != *bs {
				fmt.Printf("error: %s %d of %d: %d bytes, want %d\n", *op, i+1, *count, n, *bs)
				os.Exit(1)
			}
		}
		if err := unix.Close(fd); err != nil {
			fail("close", err)
		}
		fmt.Printf("ok: %s\n", what)
	case "sg":
		if *bs%512 != 0 {
			fmt.Println("error: -bs must be a multiple of 512 for sg")
			os.Exit(2)
		}
		fd, err := unix.Open(flag.Arg(0), unix.O_RDWR, 0)
		if err != nil {
			fail("open", err)
		}
		direct, indirect := 0, 0
		for i := 0; i < *count; i++ {
			d, err := sgRW(fd, *op == "write", buf)
			if err != nil {
				fail(fmt.Sprintf("SG_IO %s %d of %d", *op, i+1, *count), err)
			}
			if d {
				direct++
			} else {
				indirect++
			}
		}
		fmt.Printf("ok: %s, direct %d, copied %d\n", what, direct, indirect)
	default:
		fmt.Fprintln(os.Stderr, "aligntest: -path is sd, st or sg")
		os.Exit(2)
	}
}

// sgRW sends READ(10)/WRITE(10) of len(buf)/512 blocks at LBA 0 and says
// whether the kernel transferred directly from the user pages.
func sgRW(fd int, write bool, buf []byte) (bool, error) {
	blocks := len(buf) / 512
	cdb := []byte{0x28, 0, 0, 0, 0, 0, 0, byte(blocks >> 8), byte(blocks), 0}
	dir := sgio.FromDevice
	if write {
		cdb[0], dir = 0x2a, sgio.ToDevice
	}
	sense := make([]byte, 32)
	r, err := sgio.Do(fd, &sgio.Request{CDB: cdb, Dir: dir, Data: buf, Sense: sense, Timeout: 20 * time.Second, Direct: true})
	if err != nil {
		return false, err
	}
	if err := r.Err(); err != nil || r.Status != 0 {
		return false, fmt.Errorf("SCSI status 0x%02x host 0x%x driver 0x%x sense % x", r.Status, r.Host, r.Driver, sense[:r.SenseLen])
	}
	return r.Direct, nil
}

var errnoNames = map[unix.Errno]string{
	unix.EINVAL: "EINVAL", unix.EFAULT: "EFAULT", unix.EIO: "EIO", unix.ENOMEM: "ENOMEM",
	unix.EBUSY: "EBUSY", unix.EPERM: "EPERM", unix.EACCES: "EACCES", unix.ENOSPC: "ENOSPC",
	unix.ENXIO: "ENXIO", unix.ENOMEDIUM: "ENOMEDIUM", unix.EOVERFLOW: "EOVERFLOW", unix.ENOTTY: "ENOTTY",
}

func fail(what string, err error) {
	var e unix.Errno
	if errors.As(err, &e) {
		name := errnoNames[e]
		if name == "" {
			name = fmt.Sprintf("errno %d", int(e))
		}
		fmt.Printf("error: %s: %s (%v)\n", what, name, e)
	} else {
		fmt.Printf("error: %s: %v\n", what, err)
	}
	os.Exit(1)
}
