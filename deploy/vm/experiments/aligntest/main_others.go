//go:build !linux

package main

import (
	"fmt"
	"os"
	"runtime"
)

// main off Linux only says so: O_DIRECT on a SCSI disk, st and SG_IO are
// what aligntest measures, and they are Linux's.
func main() {
	fmt.Fprintf(os.Stderr, "aligntest: needs Linux (O_DIRECT, st, SG_IO), not %s\n", runtime.GOOS)
	os.Exit(1)
}
