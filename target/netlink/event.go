package netlink

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	nl "github.com/mdlayher/netlink"
)

// An Event is a TCM-USER notification from the kernel: Added, Removed or
// Reconfig. Use a type switch on it.
type Event interface {
	// Dev returns what every event carries about its device.
	Dev() Device
}

// Device identifies the TCMU device an event is about. The kernel fills it
// in tcmu_netlink_event_init.
type Device struct {
	// DeviceName is TCMU_ATTR_DEVICE, the uio device name:
	// "tcm-user/<hba>/<name>/<dev_config>" (ParseDeviceName splits it).
	DeviceName string
	// Minor is TCMU_ATTR_MINOR: the device node is /dev/uio<Minor>.
	Minor uint32
	// DeviceID is TCMU_ATTR_DEVICE_ID, the target core's dev_index; the
	// reply is matched on it. Zero in version 1 events, which have none.
	DeviceID uint32
	// Version is the generic netlink header version of the event. The
	// kernel waits for a reply only from version 2 on (Reply knows).
	Version uint8
}

// Dev returns d.
func (d Device) Dev() Device { return d }

// UIO returns the uio device name, "uio<Minor>".
func (d Device) UIO() string { return "uio" + strconv.FormatUint(uint64(d.Minor), 10) }

// Added is TCMU_CMD_ADDED_DEVICE: a user backstore was enabled (configfs
// enable=1). When replies are on, the enable write blocks until Reply.
type Added struct{ Device }

// Removed is TCMU_CMD_REMOVED_DEVICE: a user backstore is being removed;
// its ring and uio device go away after the reply (or at once when replies
// are off).
type Removed struct{ Device }

// Reconfig is TCMU_CMD_RECONFIG_DEVICE: an attribute of a live device was
// written. Exactly one of DevConfig, DevSize and WriteCache is set. The
// configfs write returns the status of the Reply (and fails with ESRCH when
// no daemon listens), and the kernel stores the new value only on success.
type Reconfig struct {
	Device
	// DevConfig is the new attrib/dev_config, exactly as written: it ends
	// with a newline when written with echo. On success the kernel renames
	// the uio device to match.
	DevConfig *string
	// DevSize is the new attrib/dev_size in bytes.
	DevSize *uint64
	// WriteCache is the new attrib/emulate_write_cache (any nonzero value
	// is true).
	WriteCache *bool
}

// A DecodeError reports a TCM-USER message that could not be decoded. The
// kernel may still be waiting for an answer to it: when the message carried
// a DEVICE_ID, Event holds what was decoded (its Device at least), so the
// caller can Reply with an error status instead of leaving the configfs
// write that caused it blocked.
type DecodeError struct {
	Command uint8 // generic netlink command of the message
	Event   Event // nil unless the DEVICE_ID is known
	Err     error
}

func (e *DecodeError) Error() string {
	return "decode tcm-user " + cmdName(e.Command) + " message: " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

func cmdName(c uint8) string {
	switch c {
	case cmdAddedDevice:
		return "ADDED_DEVICE"
	case cmdRemovedDevice:
		return "REMOVED_DEVICE"
	case cmdReconfigDevice:
		return "RECONFIG_DEVICE"
	}
	return "command " + strconv.Itoa(int(c))
}

// genlHeaderLen is the size of struct genlmsghdr (cmd, version, reserved).
const genlHeaderLen = 4

// decodeEvent decodes the payload of a TCM-USER netlink message (generic
// netlink header and attributes). It returns a nil Event and a nil error
// for commands that are not events (they are ignored), and a *DecodeError
// for a malformed event. Unknown attributes are ignored; known attributes
// of the wrong size, duplicated, or missing are errors.
func decodeEvent(b []byte) (Event, error) {
	if len(b) < genlHeaderLen {
		return nil, &DecodeError{Err: fmt.Errorf("message of %d bytes is shorter than the generic netlink header", len(b))}
	}
	cmd, version := b[0], b[1]
	switch cmd {
	case cmdAddedDevice, cmdRemovedDevice, cmdReconfigDevice:
	default:
		return nil, nil
	}
	fail := func(ev Event, err error) (Event, error) {
		return nil, &DecodeError{Command: cmd, Event: ev, Err: err}
	}
	ad, err := nl.NewAttributeDecoder(b[genlHeaderLen:])
	if err != nil {
		return fail(nil, err)
	}
	var (
		d          = Device{Version: version}
		seen       uint32
		haveID     bool
		devConfig  *string
		devSize    *uint64
		writeCache *bool
		attrErr    error
	)
	for ad.Next() {
		t := ad.Type()
		if t >= 32 {
			continue
		}
		bit := uint32(1) << t
		known := t == attrDevice || t == attrMinor || t == attrDeviceID || t == attrDevCfg || t == attrDevSize || t == attrWriteCache
		if known && seen&bit != 0 {
			attrErr = errors.Join(attrErr, fmt.Errorf("attribute %d appears twice", t))
			continue
		}
		seen |= bit
		switch t {
		case attrDevice:
			s, err := cString(ad.Bytes())
			if err != nil {
				attrErr = errors.Join(attrErr, fmt.Errorf("DEVICE: %w", err))
			}
			d.DeviceName = s
		case attrMinor:
			v, err := fixed(ad.Bytes(), 4)
			if err != nil {
				attrErr = errors.Join(attrErr, fmt.Errorf("MINOR: %w", err))
			}
			d.Minor = uint32(v)
		case attrDeviceID:
			v, err := fixed(ad.Bytes(), 4)
			if err != nil {
				attrErr = errors.Join(attrErr, fmt.Errorf("DEVICE_ID: %w", err))
				break
			}
			d.DeviceID, haveID = uint32(v), true
		case attrDevCfg:
			s, err := cString(ad.Bytes())
			if err != nil {
				attrErr = errors.Join(attrErr, fmt.Errorf("DEV_CFG: %w", err))
			}
			devConfig = &s
		case attrDevSize:
			v, err := fixed(ad.Bytes(), 8)
			if err != nil {
				attrErr = errors.Join(attrErr, fmt.Errorf("DEV_SIZE: %w", err))
			}
			devSize = &v
		case attrWriteCache:
			v, err := fixed(ad.Bytes(), 1)
			if err != nil {
				attrErr = errors.Join(attrErr, fmt.Errorf("WRITECACHE: %w", err))
			}
			wc := v != 0
			writeCache = &wc
		}
	}
	if err := ad.Err(); err != nil {
		attrErr = errors.Join(attrErr, err)
	}

	var ev Event
	switch cmd {
	case cmdAddedDevice:
		ev = Added{d}
	case cmdRemovedDevice:
		ev = Removed{d}
	case cmdReconfigDevice:
		ev = Reconfig{Device: d, DevConfig: devConfig, DevSize: devSize, WriteCache: writeCache}
	}
	// Only an event with a DEVICE_ID can be answered (tcmu_genl_cmd_done
	// looks the device up by it).
	answerable := ev
	if !haveID || version < 2 {
		answerable = nil
	}
	if attrErr != nil {
		return fail(answerable, attrErr)
	}
	if seen&(1<<attrDevice) == 0 || d.DeviceName == "" {
		return fail(answerable, errors.New("no DEVICE attribute (uio device name)"))
	}
	if seen&(1<<attrMinor) == 0 {
		return fail(answerable, errors.New("no MINOR attribute"))
	}
	// Version 2 events always carry DEVICE_ID (tcmu-runner drops those
	// that do not); without it there is no way to reply.
	if version >= 2 && !haveID {
		return fail(nil, fmt.Errorf("version %d event without DEVICE_ID", version))
	}
	if cmd == cmdReconfigDevice {
		n := 0
		for _, set := range []bool{devConfig != nil, devSize != nil, writeCache != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fail(answerable, fmt.Errorf("%d of DEV_CFG, DEV_SIZE, WRITECACHE present, want exactly one", n))
		}
	}
	return ev, nil
}

// cString decodes an NLA_STRING: the bytes up to the NUL terminator (which
// the kernel always sends; a missing one is tolerated). Bytes other than
// NUL after the terminator mean the attribute is not a string.
func cString(b []byte) (string, error) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return string(b), nil
	}
	for _, c := range b[i+1:] {
		if c != 0 {
			return string(b[:i]), fmt.Errorf("NUL byte inside the string at offset %d", i)
		}
	}
	return string(b[:i]), nil
}

// fixed decodes a native-endian unsigned integer attribute of exactly n
// bytes.
func fixed(b []byte, n int) (uint64, error) {
	if len(b) != n {
		return 0, fmt.Errorf("payload is %d bytes, want %d", len(b), n)
	}
	switch n {
	case 1:
		return uint64(b[0]), nil
	case 4:
		return uint64(binary.NativeEndian.Uint32(b)), nil
	default:
		return binary.NativeEndian.Uint64(b), nil
	}
}

// isFamilyRemoval reports whether the payload of an nlctrl message is
// CTRL_CMD_DELFAMILY for the family id.
func isFamilyRemoval(b []byte, id uint16) bool {
	if len(b) < genlHeaderLen || b[0] != ctrlCmdDelFamily {
		return false
	}
	ad, err := nl.NewAttributeDecoder(b[genlHeaderLen:])
	if err != nil {
		return false
	}
	for ad.Next() {
		switch ad.Type() {
		case ctrlAttrFamilyID:
			if v := ad.Uint16(); ad.Err() == nil && v == id {
				return true
			}
		case ctrlAttrFamilyName:
			if s, err := cString(ad.Bytes()); err == nil && s == familyName {
				return true
			}
		}
	}
	return false
}
