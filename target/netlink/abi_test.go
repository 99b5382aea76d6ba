package netlink

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestABI pins the constants to include/uapi/linux/target_core_user.h:
//
//	enum tcmu_genl_cmd {
//		TCMU_CMD_UNSPEC,
//		TCMU_CMD_ADDED_DEVICE,
//		TCMU_CMD_REMOVED_DEVICE,
//		TCMU_CMD_RECONFIG_DEVICE,
//		TCMU_CMD_ADDED_DEVICE_DONE,
//		TCMU_CMD_REMOVED_DEVICE_DONE,
//		TCMU_CMD_RECONFIG_DEVICE_DONE,
//		TCMU_CMD_SET_FEATURES,
//		__TCMU_CMD_MAX,
//	};
//	enum tcmu_genl_attr {
//		TCMU_ATTR_UNSPEC,
//		TCMU_ATTR_DEVICE,
//		TCMU_ATTR_MINOR,
//		TCMU_ATTR_PAD,
//		TCMU_ATTR_DEV_CFG,
//		TCMU_ATTR_DEV_SIZE,
//		TCMU_ATTR_WRITECACHE,
//		TCMU_ATTR_CMD_STATUS,
//		TCMU_ATTR_DEVICE_ID,
//		TCMU_ATTR_SUPP_KERN_CMD_REPLY,
//		__TCMU_ATTR_MAX,
//	};
//
// and drivers/target/target_core_user.c: .name = "TCM-USER", .version = 2,
// tcmu_mcgrps[TCMU_MCGRP_CONFIG] = { .name = "config" }.
func TestABI(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"TCMU_CMD_UNSPEC", cmdUnspec, 0},
		{"TCMU_CMD_ADDED_DEVICE", cmdAddedDevice, 1},
		{"TCMU_CMD_REMOVED_DEVICE", cmdRemovedDevice, 2},
		{"TCMU_CMD_RECONFIG_DEVICE", cmdReconfigDevice, 3},
		{"TCMU_CMD_ADDED_DEVICE_DONE", cmdAddedDeviceDone, 4},
		{"TCMU_CMD_REMOVED_DEVICE_DONE", cmdRemovedDeviceDone, 5},
		{"TCMU_CMD_RECONFIG_DEVICE_DONE", cmdReconfigDeviceDone, 6},
		{"TCMU_CMD_SET_FEATURES", cmdSetFeatures, 7},
		{"TCMU_ATTR_UNSPEC", attrUnspec, 0},
		{"TCMU_ATTR_DEVICE", attrDevice, 1},
		{"TCMU_ATTR_MINOR", attrMinor, 2},
		{"TCMU_ATTR_PAD", attrPad, 3},
		{"TCMU_ATTR_DEV_CFG", attrDevCfg, 4},
		{"TCMU_ATTR_DEV_SIZE", attrDevSize, 5},
		{"TCMU_ATTR_WRITECACHE", attrWriteCache, 6},
		{"TCMU_ATTR_CMD_STATUS", attrCmdStatus, 7},
		{"TCMU_ATTR_DEVICE_ID", attrDeviceID, 8},
		{"TCMU_ATTR_SUPP_KERN_CMD_REPLY", attrSuppKernCmdReply, 9},
		{"genl version", genlVersion, 2},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if familyName != "TCM-USER" || groupName != "config" || ctrlFamilyName != "nlctrl" || ctrlGroupName != "notify" {
		t.Errorf("names: %q %q %q %q", familyName, groupName, ctrlFamilyName, ctrlGroupName)
	}
}

// TestABIHeader checks the same numbers against the installed UAPI header
// (linux-libc-dev), when there is one, by counting enumerators.
func TestABIHeader(t *testing.T) {
	const path = "/usr/include/linux/target_core_user.h"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no UAPI header: %v", err)
	}
	want := map[string]int{
		"TCMU_CMD_ADDED_DEVICE": cmdAddedDevice, "TCMU_CMD_REMOVED_DEVICE": cmdRemovedDevice,
		"TCMU_CMD_RECONFIG_DEVICE": cmdReconfigDevice, "TCMU_CMD_ADDED_DEVICE_DONE": cmdAddedDeviceDone,
		"TCMU_CMD_REMOVED_DEVICE_DONE": cmdRemovedDeviceDone, "TCMU_CMD_RECONFIG_DEVICE_DONE": cmdReconfigDeviceDone,
		"TCMU_CMD_SET_FEATURES": cmdSetFeatures,
		"TCMU_ATTR_DEVICE":      attrDevice, "TCMU_ATTR_MINOR": attrMinor, "TCMU_ATTR_PAD": attrPad,
		"TCMU_ATTR_DEV_CFG": attrDevCfg, "TCMU_ATTR_DEV_SIZE": attrDevSize, "TCMU_ATTR_WRITECACHE": attrWriteCache,
		"TCMU_ATTR_CMD_STATUS": attrCmdStatus, "TCMU_ATTR_DEVICE_ID": attrDeviceID,
		"TCMU_ATTR_SUPP_KERN_CMD_REPLY": attrSuppKernCmdReply,
	}
	got := map[string]int{}
	for _, enum := range []string{"tcmu_genl_cmd", "tcmu_genl_attr"} {
		m := regexp.MustCompile(`(?s)enum ` + enum + ` \{(.*?)\};`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no enum %s", path, enum)
		}
		i := 0
		for line := range strings.SplitSeq(string(m[1]), "\n") {
			name := strings.TrimSuffix(strings.TrimSpace(line), ",")
			if name == "" || strings.Contains(name, "=") {
				continue
			}
			got[name] = i
			i++
		}
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s: header says %d (present %v), package says %d", name, g, ok, v)
		}
	}
}
