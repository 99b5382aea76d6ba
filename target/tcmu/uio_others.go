//go:build !linux

package tcmu

// OpenUIO fails: TCMU needs Linux.
func OpenUIO(path string, size int) (UIO, error) { return nil, errUnsupported }
