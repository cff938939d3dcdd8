package main

import "golang.org/x/sys/unix"

// pipePending returns the bytes waiting to be read in pipe fd: FIONREAD
// (pipe(7)), whose request number x/sys names TIOCINQ, its tty alias.
func pipePending(fd uintptr) (int, bool) {
	n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	return n, err == nil
}
