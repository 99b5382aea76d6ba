//go:build !linux

package tcmu

import "errors"

// errUnsupported is what the uio device returns elsewhere.
var errUnsupported = errors.New("TCMU needs Linux")
