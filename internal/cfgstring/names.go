package cfgstring

import (
	"fmt"
	"strings"
)

// The names a device goes by, and the characters a cfgstring may hold at
// all: one rule each, which the config file, the transport (configfs), a
// library's drives= and the D-Bus service all apply.

// DeviceName checks a device name, the configfs storage object name every
// layer knows a device by (the config file, targetcli, the `device`
// metric label, a library's drives=, file names under the state
// directories): 1 to 64 of [A-Za-z0-9_.-], not starting with '.' or '-'.
func DeviceName(s string) error {
	ok := len(s) >= 1 && len(s) <= 64 && s[0] != '.' && s[0] != '-'
	for i := 0; ok && i < len(s); i++ {
		c := s[i]
		ok = isWord(c) || c == '.' || c == '-'
	}
	if !ok {
		return fmt.Errorf("%q is not a device name: want 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-'", s)
	}
	return nil
}

// Subtype checks a TCMU handler subtype (vdisk, vtape, vlibrary): 1 to 64
// of [A-Za-z0-9_], not starting with a digit. It is the head of the
// kernel's dev_config and, for targetcli, an element of a D-Bus bus name
// and object path, where a leading digit is refused.
func Subtype(s string) error {
	ok := len(s) >= 1 && len(s) <= 64 && (s[0] < '0' || s[0] > '9')
	for i := 0; ok && i < len(s); i++ {
		ok = isWord(s[i])
	}
	if !ok {
		return fmt.Errorf("%q is not a handler subtype: want 1-64 of [A-Za-z0-9_], not starting with a digit (it is a D-Bus bus name element for targetcli)", s)
	}
	return nil
}

// forbidden are the characters no cfgstring may hold: the kernel splits
// dev_config on ',', rtslib (targetcli) forbids ':', and a newline or NUL
// would end the configfs attribute.
const forbidden = ",:\n\x00"

// CheckChars refuses a cfgstring with a character of forbidden in it,
// naming the character and its offset.
func CheckChars(s string) error {
	if i := strings.IndexAny(s, forbidden); i >= 0 {
		return fmt.Errorf("%q at offset %d: ',' and ':' are not allowed, nor newlines (pairs are separated by ';'; the kernel splits dev_config on ',', rtslib forbids ':')", s[i], i)
	}
	return nil
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}
