//go:build !linux

package target

func openUIO(path string, size int) (ringDev, error) { return nil, errUnsupported }
