package main

import "golang.org/x/sys/unix"

// enomedium is the errno of "no medium in the drive" on the control
// socket (see errno_others.go).
const enomedium = unix.ENOMEDIUM

// emediumtype is the errno of "the drive does not read that cartridge".
const emediumtype = unix.EMEDIUMTYPE
