//go:build !linux

package systemd

import (
	"errors"
	"os"
)

// Memory files (memfd_create) and systemd's notify socket are Linux's.
var errNotLinux = errors.New("the fd store needs Linux")

func memFile(string) (*os.File, error) { return nil, errNotLinux }

func sendFiles(string, string, ...*os.File) error { return errNotLinux }
