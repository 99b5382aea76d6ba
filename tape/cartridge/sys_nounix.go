//go:build !unix

package cartridge

import (
	"errors"
	"os"
)

var (
	errWouldBlock = errors.New("would block")
	errReadOnlyFS = errors.New("read-only file system")
)

func lockFile(*os.File, bool) error {
	return errors.ErrUnsupported
}
