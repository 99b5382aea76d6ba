package netlink

import (
	"errors"
	"reflect"
	"testing"

	nl "github.com/mdlayher/netlink"
)

// FuzzDecode feeds arbitrary message payloads to the event decoder. It must
// never panic; whatever it accepts must survive an encode/decode round trip
// unchanged; and a DecodeError may carry an event only when the message had
// a DEVICE_ID to answer.
func FuzzDecode(f *testing.F) {
	f.Add(goldenReconfigSize)
	f.Add(msg(cmdAddedDevice, 2, attrs(attrDevice, "tcm-user/0/d/vdisk/size=1M", attrMinor, uint32(1), attrDeviceID, uint32(9))))
	f.Add(msg(cmdRemovedDevice, 1, attrs(attrDevice, "tcm-user/0/d", attrMinor, uint32(0))))
	f.Add(msg(cmdReconfigDevice, 2, attrs(attrDevice, "x", attrMinor, uint32(1), attrDeviceID, uint32(2), attrDevCfg, "vtape/a=b\n")))
	f.Add(msg(cmdReconfigDevice, 2, attrs(attrDevice, "x", attrMinor, uint32(1), attrDeviceID, uint32(2), attrPad, []byte{}, attrDevSize, uint64(1))))
	f.Add(msg(cmdReconfigDevice, 2, attrs(attrDevice, "x", attrMinor, uint32(1), attrDeviceID, uint32(2), attrWriteCache, uint8(7))))
	f.Add([]byte{cmdAddedDevice, 2, 0, 0, 8, 0, 1, 0, 'a'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := decodeEvent(b)
		if err != nil {
			if ev != nil {
				t.Fatalf("decodeEvent returned both %#v and %v", ev, err)
			}
			if de, ok := errors.AsType[*DecodeError](err); ok && de.Event != nil && de.Event.Dev().Version < 2 {
				t.Fatalf("answerable event from a version %d message", de.Event.Dev().Version)
			}
			return
		}
		if ev == nil {
			return
		}
		again, err := decodeEvent(encodeEvent(t, ev))
		if err != nil {
			t.Fatalf("re-decode of %#v: %v", ev, err)
		}
		if !reflect.DeepEqual(again, ev) {
			t.Fatalf("round trip changed the event:\n%#v\n%#v", ev, again)
		}
	})
}

// encodeEvent encodes ev the way the kernel does.
func encodeEvent(t *testing.T, ev Event) []byte {
	d := ev.Dev()
	ae := nl.NewAttributeEncoder()
	ae.String(attrDevice, d.DeviceName)
	ae.Uint32(attrMinor, d.Minor)
	if d.Version >= 2 || d.DeviceID != 0 {
		ae.Uint32(attrDeviceID, d.DeviceID)
	}
	var cmd uint8
	switch ev := ev.(type) {
	case Added:
		cmd = cmdAddedDevice
	case Removed:
		cmd = cmdRemovedDevice
	case Reconfig:
		cmd = cmdReconfigDevice
		switch {
		case ev.DevConfig != nil:
			ae.String(attrDevCfg, *ev.DevConfig)
		case ev.DevSize != nil:
			ae.Uint64(attrDevSize, *ev.DevSize)
		case ev.WriteCache != nil:
			var v uint8
			if *ev.WriteCache {
				v = 1
			}
			ae.Uint8(attrWriteCache, v)
		}
	}
	b, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return msg(cmd, d.Version, b)
}
