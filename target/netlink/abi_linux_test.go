package netlink

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestABIGenetlink pins the nlctrl constants to
// include/uapi/linux/genetlink.h, as x/sys/unix has it (for Linux only).
func TestABIGenetlink(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"GENL_ID_CTRL", ctrlID, unix.GENL_ID_CTRL},
		{"CTRL_CMD_DELFAMILY", ctrlCmdDelFamily, unix.CTRL_CMD_DELFAMILY},
		{"CTRL_ATTR_FAMILY_ID", ctrlAttrFamilyID, unix.CTRL_ATTR_FAMILY_ID},
		{"CTRL_ATTR_FAMILY_NAME", ctrlAttrFamilyName, unix.CTRL_ATTR_FAMILY_NAME},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}
