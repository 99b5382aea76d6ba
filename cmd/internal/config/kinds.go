package config

import (
	"slices"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/tape/cartridge"
	"github.com/vscsid/vscsid/tape/changer"
)

// Kinds are the device kinds vscsid serves, each declared by its own
// package: a new kind is one line here.
var Kinds = []device.Kind{disk.DeviceKind, cartridge.DriveKind, changer.DeviceKind}

// KindOf returns the kind of subtype.
func KindOf(subtype string) (device.Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k device.Kind) bool { return k.Subtype == subtype })
	if i < 0 {
		return device.Kind{}, false
	}
	return Kinds[i], true
}

// TypeNames are the subtypes, sorted.
func TypeNames() []string {
	n := make([]string, len(Kinds))
	for i, k := range Kinds {
		n[i] = k.Subtype
	}
	slices.Sort(n)
	return n
}
