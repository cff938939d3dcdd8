// Package part divides a flash.Device into named partitions: bounded
// views (Sub), read-only where the partition says so, and the two tables
// AR71xx-family boot loaders describe them with: U-Boot/Linux mtdparts
// strings (ParseMtdparts) and the RedBoot FIS directory (ParseFIS).
//
// A read-only view is how the calibration ("art") partition reaches the
// Wi-Fi driver: readable, never erased or programmed.
package part

import (
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/flash"
)

// Errors.
var (
	ErrReadOnly = errors.New("part: partition is read-only")
	ErrRange    = errors.New("part: offset or length outside the partition")
	ErrLayout   = errors.New("part: bad partition layout")
	ErrNotFound = errors.New("part: no such partition")
)

// Partition is one named region of a flash device.
type Partition struct {
	Name         string
	Offset, Size int64
	ReadOnly     bool
}

func (p Partition) String() string {
	ro := ""
	if p.ReadOnly {
		ro = " ro"
	}
	return fmt.Sprintf("%q %#x+%#x%s", p.Name, p.Offset, p.Size, ro)
}

// End is the offset just past the partition.
func (p Partition) End() int64 { return p.Offset + p.Size }

// Find returns the partition called name.
func Find(parts []Partition, name string) (Partition, error) {
	for _, p := range parts {
		if p.Name == name {
			return p, nil
		}
	}
	return Partition{}, fmt.Errorf("%w: %q", ErrNotFound, name)
}

// View is a partition of a device; offsets are relative to its start.
type View struct {
	dev flash.Device
	p   Partition
}

var _ flash.Device = (*View)(nil)

// Sub returns the view of dev that p describes. The partition must lie
// within dev and start and end on erase block boundaries, so that Erase on
// the view never touches a neighbour. The device returned is a *View.
func Sub(dev flash.Device, p Partition) (flash.Device, error) {
	bs := int64(dev.BlockSize())
	switch {
	case p.Offset < 0 || p.Size <= 0 || p.Offset > dev.Size() || p.Size > dev.Size()-p.Offset:
		return nil, fmt.Errorf("%w: %v outside the device (size %#x)", ErrLayout, p, dev.Size())
	case bs <= 0 || p.Offset%bs != 0 || p.Size%bs != 0:
		return nil, fmt.Errorf("%w: %v not aligned to the %#x-byte erase block", ErrLayout, p, bs)
	}
	return &View{dev: dev, p: p}, nil
}

// Partition returns what the view covers.
func (v *View) Partition() Partition { return v.p }

// Size implements flash.Device.
func (v *View) Size() int64 { return v.p.Size }

// BlockSize implements flash.Device.
func (v *View) BlockSize() int { return v.dev.BlockSize() }

// ProgramUnit implements flash.Device.
func (v *View) ProgramUnit() int { return v.dev.ProgramUnit() }

func (v *View) check(off int64, n int) error {
	if off < 0 || n < 0 || off > v.p.Size || int64(n) > v.p.Size-off {
		return fmt.Errorf("%w: %d bytes at %#x of %s", ErrRange, n, off, v.p)
	}
	return nil
}

// ReadAt implements flash.Device.
func (v *View) ReadAt(p []byte, off int64) (int, error) {
	if err := v.check(off, len(p)); err != nil {
		return 0, err
	}
	return v.dev.ReadAt(p, v.p.Offset+off)
}

// Erase implements flash.Device.
func (v *View) Erase(off int64) error {
	if v.p.ReadOnly {
		return fmt.Errorf("erase at %#x of %s: %w", off, v.p, ErrReadOnly)
	}
	if err := v.check(off, v.dev.BlockSize()); err != nil {
		return err
	}
	return v.dev.Erase(v.p.Offset + off)
}

// Program implements flash.Device.
func (v *View) Program(off int64, p []byte) error {
	if v.p.ReadOnly {
		return fmt.Errorf("program at %#x of %s: %w", off, v.p, ErrReadOnly)
	}
	if err := v.check(off, len(p)); err != nil {
		return err
	}
	return v.dev.Program(v.p.Offset+off, p)
}

// Unlock passes a block unlock through to devices with lock bits (flash/cfi),
// so that confstore can use a partition of such a device.
func (v *View) Unlock(off int64) error {
	if v.p.ReadOnly {
		return fmt.Errorf("unlock at %#x of %s: %w", off, v.p, ErrReadOnly)
	}
	l, ok := v.dev.(interface{ Unlock(int64) error })
	if !ok {
		return fmt.Errorf("part: %s: device has no lock bits", v.p)
	}
	if err := v.check(off, v.dev.BlockSize()); err != nil {
		return err
	}
	return l.Unlock(v.p.Offset + off)
}

// checkLayout refuses partitions outside the device or overlapping each
// other (parts sorted by offset or not).
func checkLayout(parts []Partition, devSize int64) error {
	for i, p := range parts {
		if p.Offset < 0 || p.Size <= 0 || p.Offset > devSize || p.Size > devSize-p.Offset {
			return fmt.Errorf("%w: %v runs past the end of the %#x-byte device", ErrLayout, p, devSize)
		}
		for _, q := range parts[:i] {
			if p.Offset < q.End() && q.Offset < p.End() {
				return fmt.Errorf("%w: %v overlaps %v", ErrLayout, p, q)
			}
		}
	}
	return nil
}
