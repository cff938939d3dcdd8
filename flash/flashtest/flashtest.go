// Package flashtest is an in-memory flash.Device for tests of the layers
// above the chip drivers (sysupgrade's users, the configuration store's):
// NOR semantics (erase sets 0xFF, program only clears bits, both
// block-checked) without a bus or hazards; the hostile models
// (flash/cfi/cfisim, flash/spinor/spinorsim) are for the drivers.
package flashtest

import (
	"fmt"
	"sync"
)

// RAM is a flash.Device in memory. It is safe for concurrent use.
type RAM struct {
	mu     sync.Mutex
	data   []byte
	block  int
	Erases int // blocks erased so far
	Writes int // Program calls so far
}

// New returns an erased device of size bytes in blocks of block bytes.
func New(size, block int) *RAM {
	d := &RAM{data: make([]byte, size), block: block}
	for i := range d.data {
		d.data[i] = 0xFF
	}
	return d
}

func (d *RAM) Size() int64      { return int64(len(d.data)) }
func (d *RAM) BlockSize() int   { return d.block }
func (d *RAM) ProgramUnit() int { return 1 }

// ReadAt implements flash.Device.
func (d *RAM) ReadAt(p []byte, off int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off > int64(len(d.data)) || int64(len(p)) > int64(len(d.data))-off {
		return 0, fmt.Errorf("flashtest: read of %d bytes at %#x outside the device", len(p), off)
	}
	return copy(p, d.data[off:]), nil
}

// Erase implements flash.Device.
func (d *RAM) Erase(off int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off >= int64(len(d.data)) || off%int64(d.block) != 0 {
		return fmt.Errorf("flashtest: erase at %#x is not a block", off)
	}
	for i := off; i < off+int64(d.block); i++ {
		d.data[i] = 0xFF
	}
	d.Erases++
	return nil
}

// Program implements flash.Device: bits only go from 1 to 0.
func (d *RAM) Program(off int64, p []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off < 0 || off > int64(len(d.data)) || int64(len(p)) > int64(len(d.data))-off {
		return fmt.Errorf("flashtest: program of %d bytes at %#x outside the device", len(p), off)
	}
	for i, b := range p {
		d.data[off+int64(i)] &= b
	}
	d.Writes++
	return nil
}

// Bytes returns a copy of the contents.
func (d *RAM) Bytes() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]byte(nil), d.data...)
}
