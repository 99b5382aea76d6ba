//go:build !linux

package target

import "errors"

// errUnsupported is what the Linux-only parts (uio, the lock file) return
// elsewhere.
var errUnsupported = errors.New("TCMU needs Linux")
