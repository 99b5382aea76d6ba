package netlink

// The TCM-USER generic netlink family, mirrored from
// include/uapi/linux/target_core_user.h (enum tcmu_genl_cmd, enum
// tcmu_genl_attr) and drivers/target/target_core_user.c (tcmu_genl_family,
// tcmu_mcgrps). abi_test.go pins every number.

const (
	familyName = "TCM-USER" // tcmu_genl_family.name
	groupName  = "config"   // tcmu_mcgrps[TCMU_MCGRP_CONFIG].name

	// genlVersion is the generic netlink header version of our requests.
	// The kernel registers the family with .version = 2 and sends its
	// events with it; tcmu-runner sends its replies with TCMU_NL_VERSION 2.
	// The kernel does not check the version of what it receives.
	genlVersion = 2
)

// enum tcmu_genl_cmd.
const (
	cmdUnspec             = 0
	cmdAddedDevice        = 1 // kernel → daemon, multicast
	cmdRemovedDevice      = 2 // kernel → daemon, multicast
	cmdReconfigDevice     = 3 // kernel → daemon, multicast
	cmdAddedDeviceDone    = 4 // daemon → kernel, GENL_ADMIN_PERM
	cmdRemovedDeviceDone  = 5 // daemon → kernel, GENL_ADMIN_PERM
	cmdReconfigDeviceDone = 6 // daemon → kernel, GENL_ADMIN_PERM
	cmdSetFeatures        = 7 // daemon → kernel, GENL_ADMIN_PERM
)

// enum tcmu_genl_attr.
const (
	attrUnspec           = 0
	attrDevice           = 1 // NLA_STRING: the uio device name
	attrMinor            = 2 // NLA_U32: the uio minor
	attrPad              = 3 // padding for the 64-bit DEV_SIZE
	attrDevCfg           = 4 // NLA_STRING: new dev_config (RECONFIG)
	attrDevSize          = 5 // NLA_U64: new dev_size (RECONFIG)
	attrWriteCache       = 6 // NLA_U8: new emulate_write_cache (RECONFIG)
	attrCmdStatus        = 7 // NLA_S32: reply status, 0 or -errno
	attrDeviceID         = 8 // NLA_U32: se_device dev_index
	attrSuppKernCmdReply = 9 // NLA_U8: SET_FEATURES
)

// The generic netlink controller ("nlctrl"), include/uapi/linux/genetlink.h.
// Its "notify" group announces families that come and go, which is how a
// reload of target_core_user is noticed.
const (
	ctrlFamilyName     = "nlctrl"
	ctrlGroupName      = "notify"
	ctrlID             = 0x10 // GENL_ID_CTRL
	ctrlCmdDelFamily   = 2    // CTRL_CMD_DELFAMILY
	ctrlAttrFamilyID   = 1    // CTRL_ATTR_FAMILY_ID, u16
	ctrlAttrFamilyName = 2    // CTRL_ATTR_FAMILY_NAME, string
)
