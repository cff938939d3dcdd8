// Package powersave keeps devices that sleep awake while software uses them.
//
// Some chips (Atheros 802.11 MACs above all) may be put to sleep between
// uses; a register read of a sleeping chip returns garbage (0xdeadbeef on
// ath). A non-refcounted scheme breaks as soon as two paths overlap: path A
// wakes the chip and works, path B finishes and puts the chip to sleep, path A
// reads garbage. A Domain counts the holders instead: the chip is woken when
// the count rises from zero and put to sleep only when it falls back to zero,
// and the hooks run under the Domain's lock so a wake and a sleep can never
// interleave.
package powersave

import (
	"errors"
	"fmt"
	"sync"
)

// Device is what a Domain drives. The hooks run with the Domain's lock held
// and must not call back into the Domain.
type Device interface {
	// Wake brings the device to a state where registers can be accessed,
	// and returns only once it is there.
	Wake() error
	// Sleep lets the device go back to its power-saving state.
	Sleep() error
}

// ErrNotAwake is returned by Release without a matching Wake.
var ErrNotAwake = errors.New("powersave: Release without Wake")

// Domain is a refcounted force-awake over one Device.
type Domain struct {
	name string
	dev  Device

	mu     sync.Mutex
	count  int
	wakes  uint64
	sleeps uint64
	closed bool
}

// New returns a Domain for dev; name identifies it in errors.
func New(name string, dev Device) *Domain {
	return &Domain{name: name, dev: dev}
}

// Wake takes one hold on the device, waking it if this is the first hold.
// If waking fails the hold is not taken.
func (d *Domain) Wake() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("powersave: %s: Wake after Close", d.name)
	}
	if d.count == 0 {
		if err := d.dev.Wake(); err != nil {
			return fmt.Errorf("powersave: %s: wake: %w", d.name, err)
		}
		d.wakes++
	}
	d.count++
	return nil
}

// Release drops one hold; the device is put to sleep when none remain.
// A Release without a Wake returns ErrNotAwake and changes nothing. If the
// sleep hook fails the hold is still dropped (the device stays awake, which
// is safe) and the error is returned.
func (d *Domain) Release() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.count == 0 {
		return fmt.Errorf("%w (%s)", ErrNotAwake, d.name)
	}
	d.count--
	if d.count == 0 {
		d.sleeps++
		if err := d.dev.Sleep(); err != nil {
			return fmt.Errorf("powersave: %s: sleep: %w", d.name, err)
		}
	}
	return nil
}

// Do runs f with the device held awake. A failure to release after f
// succeeded is returned; f's own error takes precedence.
func (d *Domain) Do(f func() error) error {
	if err := d.Wake(); err != nil {
		return err
	}
	ferr := f()
	rerr := d.Release()
	if ferr != nil {
		return ferr
	}
	return rerr
}

// Holds returns the current number of holds.
func (d *Domain) Holds() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// Counts returns how many times the device was woken and put to sleep.
func (d *Domain) Counts() (wakes, sleeps uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.wakes, d.sleeps
}

// Close puts the device to sleep regardless of holds (suspend, detach): it
// fails if holds remain unless force is set, and later Wakes fail.
func (d *Domain) Close(force bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	if d.count > 0 && !force {
		return fmt.Errorf("powersave: %s: Close with %d holds", d.name, d.count)
	}
	d.closed = true
	d.count = 0
	d.sleeps++
	return d.dev.Sleep()
}

// Reopen allows Wakes again after Close (resume, re-attach). The device
// stays asleep until the next Wake.
func (d *Domain) Reopen() {
	d.mu.Lock()
	d.closed = false
	d.mu.Unlock()
}
