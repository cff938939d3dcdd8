// Package flash holds gowrt's NOR flash support: the Intel/Sharp CFI
// command-set driver (flash/cfi), its hostile model (flash/cfi/cfisim) and
// the power-safe configuration store built on top (flash/confstore).
// This package itself only defines the interface between them.
package flash

import "errors"

// ErrLocked is wrapped by drivers' errors for an erase or program refused
// because the block's lock bit is set.
var ErrLocked = errors.New("flash: block locked")

// Device is the part of a NOR flash the layers above a chip driver need:
// byte reads in array mode, whole-block erase and programming of erased
// bytes. Offsets are relative to the start of the device (or partition).
type Device interface {
	// Size is the device's size in bytes.
	Size() int64
	// BlockSize is the erase block size in bytes (uniform).
	BlockSize() int
	// ProgramUnit is the program granularity: offsets and lengths passed
	// to Program must be multiples of it.
	ProgramUnit() int
	// ReadAt reads len(p) bytes at off.
	ReadAt(p []byte, off int64) (int, error)
	// Erase sets the block that starts at off to all 0xFF bytes.
	Erase(off int64) error
	// Program writes p at off into erased (0xFF) flash.
	Program(off int64, p []byte) error
}
