package sgio

import (
	"errors"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A CDB SG_IO cannot carry is refused before the ioctl.
func TestDoRefusesBadCDB(t *testing.T) {
	for _, n := range []int{0, 256} {
		if _, err := Do(-1, &Request{CDB: make([]byte, n)}); err == nil {
			t.Errorf("a %d-byte CDB: no error", n)
		}
	}
}

// A node that is not a SCSI generic one refuses SG_IO, and Do says so.
func TestDoOnANonSCSINode(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SG_IO is Linux's")
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	_, err = Do(int(f.Fd()), &Request{CDB: make([]byte, 6), Sense: make([]byte, 32)})
	if !errors.Is(err, unix.ENOTTY) {
		t.Errorf("SG_IO on %s: %v, want ENOTTY", os.DevNull, err)
	}
}

func TestReplyErr(t *testing.T) {
	for _, tc := range []struct {
		r  Reply
		ok bool
	}{
		{Reply{}, true},
		{Reply{Status: 2, Driver: driverSense}, true}, // CHECK CONDITION is an answer
		{Reply{Host: 1}, false},                       // DID_NO_CONNECT
		{Reply{Driver: 0x06}, false},                  // DRIVER_TIMEOUT
	} {
		if err := tc.r.Err(); (err == nil) != tc.ok {
			t.Errorf("%+v: Err() = %v", tc.r, err)
		}
	}
}
