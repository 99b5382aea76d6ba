package netlink

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func littleEndianHost(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("golden bytes are little-endian")
	}
}

// A RECONFIG_DEVICE as tcmu_send_dev_size_event builds it on x86_64, byte
// by byte: genlmsghdr, then DEVICE, MINOR, DEVICE_ID
// (tcmu_netlink_event_init), then DEV_SIZE via nla_put_u64_64bit (no PAD
// where unaligned access is cheap).
var goldenReconfigSize = []byte{
	3, 2, 0, 0, // cmd RECONFIG_DEVICE, version 2, reserved
	// nlattr len 28 (4 + 23 characters + NUL, already aligned) type DEVICE
	28, 0, 1, 0,
	't', 'c', 'm', '-', 'u', 's', 'e', 'r', '/', '1', '/', 't', '0', '/',
	'v', 't', 'a', 'p', 'e', '/', 'x', '=', '1', 0,
	// MINOR 2
	8, 0, 2, 0, 2, 0, 0, 0,
	// DEVICE_ID 0x11223344
	8, 0, 8, 0, 0x44, 0x33, 0x22, 0x11,
	// DEV_SIZE 1 GiB
	12, 0, 5, 0, 0, 0, 0, 0x40, 0, 0, 0, 0,
}

func TestDecodeGolden(t *testing.T) {
	littleEndianHost(t)
	ev, err := decodeEvent(goldenReconfigSize)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	size := uint64(1 << 30)
	want := Reconfig{
		Device:  Device{DeviceName: "tcm-user/1/t0/vtape/x=1", Minor: 2, DeviceID: 0x11223344, Version: 2},
		DevSize: &size,
	}
	if !reflect.DeepEqual(ev, want) {
		t.Fatalf("decoded %#v\nwant    %#v", ev, want)
	}
}

func TestDecodeIgnoresNonEvents(t *testing.T) {
	for _, cmd := range []byte{cmdUnspec, cmdAddedDeviceDone, cmdRemovedDeviceDone, cmdReconfigDeviceDone, cmdSetFeatures, 8, 255} {
		ev, err := decodeEvent([]byte{cmd, 2, 0, 0, 0xff, 0xff}) // attributes not even parsed
		if ev != nil || err != nil {
			t.Errorf("command %d: decodeEvent = %v, %v, want nil, nil", cmd, ev, err)
		}
	}
}

// attrs builds an attribute stream by hand (native endian): pairs of type
// and payload, padded to 4 bytes.
func attrs(kv ...any) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		typ := kv[i].(int)
		var p []byte
		switch v := kv[i+1].(type) {
		case string:
			p = append([]byte(v), 0)
		case []byte:
			p = v
		case uint32:
			p = binary.NativeEndian.AppendUint32(nil, v)
		case uint64:
			p = binary.NativeEndian.AppendUint64(nil, v)
		case uint8:
			p = []byte{v}
		}
		b = binary.NativeEndian.AppendUint16(b, uint16(4+len(p)))
		b = binary.NativeEndian.AppendUint16(b, uint16(typ))
		b = append(b, p...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	return b
}

func msg(cmd, version byte, a []byte) []byte { return append([]byte{cmd, version, 0, 0}, a...) }

func TestDecodeMalformed(t *testing.T) {
	const name = "tcm-user/0/d/vdisk/size=1M"
	good := func(extra ...any) []byte {
		return attrs(append([]any{attrDevice, name, attrMinor, uint32(1), attrDeviceID, uint32(9)}, extra...)...)
	}
	tests := []struct {
		name       string
		b          []byte
		answerable bool   // DecodeError.Event set
		errText    string // in the error
	}{
		{"short", []byte{1, 2}, false, "shorter than the generic netlink header"},
		{"truncated attribute", msg(cmdAddedDevice, 2, []byte{8, 0, 1, 0, 'a'}), false, ""},
		{"no device", msg(cmdAddedDevice, 2, attrs(attrMinor, uint32(1), attrDeviceID, uint32(9))), true, "DEVICE"},
		{"empty device", msg(cmdAddedDevice, 2, attrs(attrDevice, "", attrMinor, uint32(1), attrDeviceID, uint32(9))), true, "DEVICE"},
		{"device with inner NUL", msg(cmdAddedDevice, 2, attrs(attrDevice, []byte("tcm-user\x00x"), attrMinor, uint32(1), attrDeviceID, uint32(9))), true, "NUL"},
		{"no minor", msg(cmdRemovedDevice, 2, attrs(attrDevice, name, attrDeviceID, uint32(9))), true, "MINOR"},
		{"minor u16", msg(cmdRemovedDevice, 2, attrs(attrDevice, name, attrMinor, []byte{1, 0}, attrDeviceID, uint32(9))), true, "MINOR"},
		{"device id u64", msg(cmdAddedDevice, 2, attrs(attrDevice, name, attrMinor, uint32(1), attrDeviceID, uint64(9))), false, "DEVICE_ID"},
		{"v2 without device id", msg(cmdAddedDevice, 2, attrs(attrDevice, name, attrMinor, uint32(1))), false, "DEVICE_ID"},
		{"duplicate device", msg(cmdAddedDevice, 2, good(attrDevice, name)), true, "twice"},
		{"reconfig without value", msg(cmdReconfigDevice, 2, good()), true, "exactly one"},
		{"reconfig with two values", msg(cmdReconfigDevice, 2, good(attrDevCfg, "vdisk/x", attrWriteCache, uint8(1))), true, "exactly one"},
		{"dev_size u32", msg(cmdReconfigDevice, 2, good(attrDevSize, uint32(1))), true, "DEV_SIZE"},
		{"writecache u32", msg(cmdReconfigDevice, 2, good(attrWriteCache, uint32(1))), true, "WRITECACHE"},
		{"dev_cfg with inner NUL", msg(cmdReconfigDevice, 2, good(attrDevCfg, []byte("a\x00b\x00"))), true, "DEV_CFG"},
		// A version 1 event cannot be answered even with an id.
		{"v1 no minor", msg(cmdAddedDevice, 1, attrs(attrDevice, name, attrDeviceID, uint32(9))), false, "MINOR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := decodeEvent(tt.b)
			var de *DecodeError
			if ev != nil || !errors.As(err, &de) {
				t.Fatalf("decodeEvent = %#v, %v; want a *DecodeError", ev, err)
			}
			if (de.Event != nil) != tt.answerable {
				t.Errorf("DecodeError.Event = %#v, answerable want %v", de.Event, tt.answerable)
			}
			if de.Event != nil && de.Event.Dev().DeviceID != 9 {
				t.Errorf("DecodeError.Event device id %d, want 9", de.Event.Dev().DeviceID)
			}
			if !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("error %q does not mention %q", err, tt.errText)
			}
		})
	}
}

func TestCString(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"abc\x00", "abc", true},
		{"abc", "abc", true}, // terminator missing: tolerated
		{"abc\x00\x00\x00", "abc", true},
		{"", "", true},
		{"ab\x00c", "ab", false},
	} {
		got, err := cString([]byte(c.in))
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("cString(%q) = %q, %v; want %q, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestIsFamilyRemoval(t *testing.T) {
	const id = 0x1d
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"by id", msg(ctrlCmdDelFamily, 2, attrs(ctrlAttrFamilyID, []byte{id, 0})), true},
		{"by name", msg(ctrlCmdDelFamily, 2, attrs(ctrlAttrFamilyName, "TCM-USER")), true},
		{"other family", msg(ctrlCmdDelFamily, 2, attrs(ctrlAttrFamilyID, []byte{id + 1, 0}, ctrlAttrFamilyName, "devlink")), false},
		{"new family", msg(1, 2, attrs(ctrlAttrFamilyID, []byte{id, 0}, ctrlAttrFamilyName, "TCM-USER")), false},
		{"garbage", []byte{ctrlCmdDelFamily, 2, 0, 0, 200, 0}, false},
		{"short", []byte{ctrlCmdDelFamily}, false},
	} {
		if got := isFamilyRemoval(c.b, id); got != c.want {
			t.Errorf("%s: isFamilyRemoval = %v, want %v", c.name, got, c.want)
		}
	}
}
