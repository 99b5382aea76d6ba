package main

import (
	"os"
	"strconv"
	"strings"
)

// effectiveCaps reads the process's effective capability set from
// /proc/self/status; ok is false where there is none.
func effectiveCaps() (capEff uint64, ok bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(l, "CapEff:"); found {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}
