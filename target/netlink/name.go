package netlink

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

const uioPrefix = "tcm-user/"

// ParseDeviceName splits a TCMU uio device name, as the kernel builds it in
// tcmu_update_uio_info and sends it in TCMU_ATTR_DEVICE (and as
// /sys/class/uio/uioN/name reads):
//
//	tcm-user/<hba>/<name>/<subtype>/<cfgstring>
//
// hba is the N of core/user_N and name the storage object's configfs name.
// The rest is dev_config, split at its first '/' (tcmu-runner's
// find_handler): cfgstring may itself contain '/'. A device whose
// dev_config is empty is named "tcm-user/<hba>/<name>": subtype and
// cfgstring are then empty, and a dev_config with no '/' gives an empty
// cfgstring; neither is an error here (no handler matches an empty
// subtype).
func ParseDeviceName(s string) (hba int, name, subtype, cfgstring string, err error) {
	rest, ok := strings.CutPrefix(s, uioPrefix)
	if !ok {
		return 0, "", "", "", fmt.Errorf("uio name %q: does not start with %q", s, uioPrefix)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return 0, "", "", "", fmt.Errorf("uio name %q: contains a NUL byte", s)
	}
	hbaStr, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, "", "", "", fmt.Errorf("uio name %q: no storage object name after the HBA", s)
	}
	// The kernel prints the HBA index with %u.
	if hbaStr == "" || strings.Trim(hbaStr, "0123456789") != "" {
		return 0, "", "", "", fmt.Errorf("uio name %q: HBA %q is not a decimal number", s, hbaStr)
	}
	n, err := strconv.ParseUint(hbaStr, 10, 32)
	if err == nil && n > math.MaxInt {
		err = &strconv.NumError{Func: "ParseUint", Num: hbaStr, Err: strconv.ErrRange}
	}
	if err != nil {
		return 0, "", "", "", fmt.Errorf("uio name %q: HBA %q: %w", s, hbaStr, errors.Unwrap(err))
	}
	name, devConfig, _ := strings.Cut(rest, "/")
	if name == "" {
		return 0, "", "", "", fmt.Errorf("uio name %q: empty storage object name", s)
	}
	subtype, cfgstring, _ = strings.Cut(devConfig, "/")
	return int(n), name, subtype, cfgstring, nil
}
