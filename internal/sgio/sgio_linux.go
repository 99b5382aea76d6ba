package sgio

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hdr is struct sg_io_hdr (include/scsi/sg.h) on 64-bit Linux; Go's field
// alignment gives the C layout (88 bytes).
type hdr struct {
	interfaceID    int32
	dxferDirection int32
	cmdLen         uint8
	mxSbLen        uint8
	iovecCount     uint16
	dxferLen       uint32
	dxferp         uintptr
	cmdp           uintptr
	sbp            uintptr
	timeout        uint32 // milliseconds
	flags          uint32
	packID         int32
	usrPtr         uintptr
	status         uint8
	maskedStatus   uint8
	msgStatus      uint8
	sbLenWr        uint8
	hostStatus     uint16
	driverStatus   uint16
	resid          int32
	duration       uint32 // milliseconds
	info           uint32
}

const (
	ioctlSGIO     = 0x2285
	dxferNone     = -1
	dxferToDev    = -2
	dxferFromDev  = -3
	flagDirectIO  = 1
	infoDirIOMask = 6
	infoDirectIO  = 2
)

// Do sends req to the SCSI generic node open as fd and waits for its
// reply. The error is the ioctl's (the request was refused before it
// reached the device: a bad length, no permission); Reply.Err says
// whether the command itself got a status.
func Do(fd int, req *Request) (Reply, error) {
	if len(req.CDB) == 0 || len(req.CDB) > 255 {
		return Reply{}, fmt.Errorf("sgio: a CDB of %d bytes", len(req.CDB))
	}
	h := hdr{
		interfaceID: 'S',
		cmdLen:      uint8(len(req.CDB)),
		cmdp:        uintptr(unsafe.Pointer(&req.CDB[0])),
		timeout:     60000,
	}
	if req.Timeout > 0 {
		h.timeout = uint32(min(req.Timeout.Milliseconds(), 1<<31))
	}
	switch {
	case req.Dir == None || len(req.Data) == 0:
		h.dxferDirection = dxferNone
	case req.Dir == ToDevice:
		h.dxferDirection = dxferToDev
	default:
		h.dxferDirection = dxferFromDev
	}
	if h.dxferDirection != dxferNone {
		h.dxferLen = uint32(len(req.Data))
		h.dxferp = uintptr(unsafe.Pointer(&req.Data[0]))
	}
	if n := min(len(req.Sense), 252); n > 0 {
		h.mxSbLen, h.sbp = uint8(n), uintptr(unsafe.Pointer(&req.Sense[0]))
	}
	if req.Direct {
		h.flags |= flagDirectIO
	}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ioctlSGIO, uintptr(unsafe.Pointer(&h)))
	// The kernel read and wrote through the pointers in h: what they
	// point to stays alive until here.
	runtime.KeepAlive(req.CDB)
	runtime.KeepAlive(req.Data)
	runtime.KeepAlive(req.Sense)
	if e != 0 {
		return Reply{}, fmt.Errorf("SG_IO: %w", e)
	}
	return Reply{
		Status: h.status, SenseLen: int(h.sbLenWr), Resid: int(h.resid),
		Host: h.hostStatus, Driver: h.driverStatus,
		Duration: time.Duration(h.duration) * time.Millisecond,
		Direct:   h.info&infoDirIOMask == infoDirectIO,
	}, nil
}
