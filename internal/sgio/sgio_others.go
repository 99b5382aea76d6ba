//go:build !linux

package sgio

// Do returns ErrUnsupported off Linux.
func Do(fd int, req *Request) (Reply, error) { return Reply{}, ErrUnsupported }
