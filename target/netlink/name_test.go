package netlink_test

import (
	"strings"
	"testing"

	"github.com/vscsid/vscsid/target/netlink"
)

func TestParseDeviceName(t *testing.T) {
	tests := []struct {
		in                       string
		hba                      int
		name, subtype, cfgstring string
	}{
		{"tcm-user/3/disk0/vdisk/size=1G;lbs=4096", 3, "disk0", "vdisk", "size=1G;lbs=4096"},
		// cfgstring may hold '/' (paths): split at the first one only.
		{"tcm-user/0/tape0/vtape/dir=/var/lib/vscsid/tapes;barcode=A00001L6", 0, "tape0", "vtape", "dir=/var/lib/vscsid/tapes;barcode=A00001L6"},
		{"tcm-user/12/fbo0/fbo//tmp/fbo0.img", 12, "fbo0", "fbo", "/tmp/fbo0.img"},
		{"tcm-user/1/d", 1, "d", "", ""},            // empty dev_config
		{"tcm-user/1/d/vdisk", 1, "d", "vdisk", ""}, // dev_config without '/'
		{"tcm-user/1/d//x", 1, "d", "", "x"},
		{"tcm-user/4294967295/d/s/c", 4294967295, "d", "s", "c"},
		{"tcm-user/1/d/vdisk/size=1G\n", 1, "d", "vdisk", "size=1G\n"}, // dev_config written with echo
	}
	for _, tt := range tests {
		hba, name, subtype, cfg, err := netlink.ParseDeviceName(tt.in)
		if err != nil || hba != tt.hba || name != tt.name || subtype != tt.subtype || cfg != tt.cfgstring {
			t.Errorf("ParseDeviceName(%q) = %d, %q, %q, %q, %v; want %d, %q, %q, %q",
				tt.in, hba, name, subtype, cfg, err, tt.hba, tt.name, tt.subtype, tt.cfgstring)
		}
	}
}

func TestParseDeviceNameErrors(t *testing.T) {
	for _, c := range []struct{ in, why string }{
		{"", "does not start"},
		{"tcm-user", "does not start"},
		{"uio/1/d/vdisk/x", "does not start"},
		{"tcm-user/1", "no storage object name"},
		{"tcm-user//d/vdisk/x", "not a decimal"},
		{"tcm-user/-1/d/vdisk/x", "not a decimal"},
		{"tcm-user/+1/d/vdisk/x", "not a decimal"},
		{"tcm-user/0x1/d/vdisk/x", "not a decimal"},
		{"tcm-user/4294967296/d/vdisk/x", "out of range"},
		{"tcm-user/1//vdisk/x", "empty storage object name"},
		{"tcm-user/1/", "empty storage object name"},
		{"tcm-user/1/d\x00/vdisk", "NUL"},
	} {
		_, _, _, _, err := netlink.ParseDeviceName(c.in)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseDeviceName(%q) = %v, want an error saying %q", c.in, err, c.why)
		}
	}
}
