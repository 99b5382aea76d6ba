//go:build !linux

package main

import "golang.org/x/sys/unix"

// enomedium is Linux's ENOMEDIUM, which other systems lack. vscsid serves
// nothing off Linux (the target package fails with "TCMU needs Linux"),
// but builds there so that --check-config and --help work on a
// developer's machine.
const enomedium = unix.Errno(123)

// emediumtype is Linux's EMEDIUMTYPE, as enomedium.
const emediumtype = unix.Errno(124)
