//go:build !linux

package target

import "io"

func lockFile(path string) (io.Closer, error) { return nil, errUnsupported }
