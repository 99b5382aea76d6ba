//go:build !linux

package netlink

import (
	"errors"
	"runtime"
)

// Dial fails off Linux: generic netlink and the TCM-USER family are
// Linux's. The rest of the package (events, replies, Conn over fakes)
// builds everywhere.
func Dial() (*Conn, error) {
	return nil, errors.New("tcm-user netlink: vscsid needs Linux, not " + runtime.GOOS)
}
