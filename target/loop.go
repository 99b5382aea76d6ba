package target

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// tcm_loop (drivers/target/loopback/tcm_loop.c) is the fabric that shows a
// LIO LUN to this host's own SCSI stack. Each vscsid device gets its own
// loopback target (its own WWN and so its own SCSI host), so adding or
// removing a LUN never raises REPORTED LUNS DATA HAS CHANGED on another
// device (st treats any unit attention as a medium change).
//
//	target/loopback/naa.<wwn>/tpgt_1/nexus        ← naa.<initiator wwn>
//	target/loopback/naa.<wwn>/tpgt_1/lun/lun_0/<name> → target/core/user_N/<name>
//	target/loopback/naa.<wwn>/tpgt_1/address      → "<host>:0:<tpgt>"
//
// Linking the LUN makes tcm_loop call scsi_add_device(host, 0, tpgt, lun)
// synchronously: the kernel scans the device (INQUIRY, VPD pages, ...)
// before symlink(2) returns, so the device must already be served.

// SCSIDevice names the Linux SCSI device tcm_loop attached for a LUN.
type SCSIDevice struct {
	Address string // host:channel:target:lun, e.g. "2:0:1:0"
	Type    int    // peripheral device type (0 disk, 1 tape), -1 if unknown
	Block   string // block device for a disk ("sda"), if sd bound to it
	Tape    string // tape device for a tape drive ("st0"; "n"+Tape rewinds not), if st bound
	Changer string // medium changer device ("sch0"), if ch bound
	Generic string // SCSI generic device ("sg2"), if sg is loaded
}

// String is the most useful device node name.
func (s SCSIDevice) String() string {
	switch {
	case s.Block != "":
		return "/dev/" + s.Block
	case s.Tape != "":
		return "/dev/n" + s.Tape
	case s.Changer != "":
		return "/dev/" + s.Changer
	case s.Generic != "":
		return "/dev/" + s.Generic
	}
	return s.Address
}

// tpgAddress parses tpgt_N/address ("%d:0:%d", tcm_loop_tpg_address_show)
// into the H:C:T:L of LUN lun.
func tpgAddress(v string, lun int) (string, error) {
	p := strings.Split(strings.TrimSpace(v), ":")
	if len(p) != 3 {
		return "", fmt.Errorf("tcm_loop address %q: want host:channel:target", v)
	}
	for _, f := range p {
		if _, err := strconv.ParseUint(f, 10, 32); err != nil {
			return "", fmt.Errorf("tcm_loop address %q: %q is not a number", v, f)
		}
	}
	return fmt.Sprintf("%s:%s:%s:%d", p[0], p[1], p[2], lun), nil
}

var (
	stRE  = regexp.MustCompile(`^st[0-9]+$`)
	schRE = regexp.MustCompile(`^sch[0-9]+$`)
)

// probeSCSI reads what is attached to the SCSI device at addr
// (/sys/class/scsi_device/<addr>/device/{type,block,scsi_tape,scsi_changer,
// scsi_generic}). complete reports whether the upper-level driver for its
// type (sd for a disk, st for a tape, ch for a medium changer) has bound.
func probeSCSI(f fsys, sysfs, addr string) (s SCSIDevice, complete bool) {
	dir := filepath.Join(sysfs, "class", "scsi_device", addr, "device")
	s = SCSIDevice{Address: addr, Type: -1}
	if v, err := f.ReadAttr(filepath.Join(dir, "type")); err == nil {
		if t, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			s.Type = t
		}
	}
	if n, _ := f.ReadDir(filepath.Join(dir, "block")); len(n) > 0 {
		s.Block = n[0]
	}
	if ns, _ := f.ReadDir(filepath.Join(dir, "scsi_tape")); len(ns) > 0 {
		for _, n := range ns {
			if stRE.MatchString(n) {
				s.Tape = n
			}
		}
	}
	if ns, _ := f.ReadDir(filepath.Join(dir, "scsi_changer")); len(ns) > 0 {
		for _, n := range ns {
			if schRE.MatchString(n) {
				s.Changer = n
			}
		}
	}
	if n, _ := f.ReadDir(filepath.Join(dir, "scsi_generic")); len(n) > 0 {
		s.Generic = n[0]
	}
	switch s.Type {
	case 0:
		complete = s.Block != ""
	case 1:
		complete = s.Tape != ""
	case 8:
		complete = s.Changer != ""
	case -1:
		complete = s.Block != "" || s.Tape != ""
	default:
		complete = f.Exists(dir)
	}
	return s, complete
}

// waitSCSI polls probeSCSI until the upper-level driver bound, ctx is done
// or timeout passed (sd and st probe asynchronously after the scan). It
// returns what it found and whether it is complete.
func waitSCSI(ctx context.Context, f fsys, sysfs, addr string, timeout time.Duration) (SCSIDevice, bool) {
	deadline := time.Now().Add(timeout)
	for {
		s, ok := probeSCSI(f, sysfs, addr)
		if ok || time.Now().After(deadline) {
			return s, ok
		}
		select {
		case <-ctx.Done():
			return s, false
		case <-time.After(20 * time.Millisecond):
		}
	}
}
