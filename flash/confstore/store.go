// Package confstore keeps a small key/value configuration in NOR flash so
// that a save interrupted at any point (power loss, reset) leaves either
// the previous or the new configuration, never a corrupt one.
//
// Two slots, each one erase block, hold copies of the configuration with a
// sequence number and a CRC-32 (record.go has the layout). A save goes to
// the slot that does not hold the current copy: erase it, program the body,
// and program the 4-byte commit mark last. Until the mark is complete the
// slot does not count, so the current copy in the other slot stays the
// newest valid one; once the mark is complete the new copy is whole (every
// earlier program was verified) and its higher sequence number wins. The
// CRC additionally rejects copies damaged after the fact. Load picks the
// valid copy with the newest sequence number.
//
// A configuration region with no valid copy and something other than
// erased flash in it is reported (ErrNoValidCopy, with what was wrong with
// each copy); the caller then runs with defaults, and the next Save
// rewrites the region.
//
// Cost per save: one block erase and one word program per non-0xFF 32-bit
// word of the encoded copy (header + records).
//
// Shared (shared.go) lets several services each keep one byte string of
// any length up to the slot in one Store, through the Load/Save shape the
// DHCP server and the clock take.
package confstore

import (
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/flash"
)

// ErrNoValidCopy means neither slot holds a valid copy and the region is
// not blank: the configuration was lost (or never completely written).
var ErrNoValidCopy = errors.New("confstore: no valid configuration copy")

// Locker is implemented by flash that has block lock bits (flash/cfi).
type Locker interface {
	Unlock(off int64) error
}

// CopyState describes one slot as Open found it.
type CopyState struct {
	Off   int64
	Valid bool
	Seq   uint32
	Err   error // ErrBlank, ErrUnsealed or an ErrFormat error if not Valid
}

func (c CopyState) String() string {
	if c.Valid {
		return fmt.Sprintf("slot %#x: seq %d", c.Off, c.Seq)
	}
	return fmt.Sprintf("slot %#x: %v", c.Off, c.Err)
}

// Store is an opened configuration region.
type Store struct {
	dev   flash.Device
	slots [2]int64
	cur   int // slot holding the current copy, or -1
	seq   uint32
	buf   []byte

	// Copies is what Open found in each slot.
	Copies [2]CopyState
	// Saves and Erases count completed saves and block erases; Programmed
	// counts bytes handed to Program (the chip skips all-ones words).
	Saves, Erases, Programmed uint64
}

// Open reads the two slots at offA and offB of dev (each one erase block)
// and returns the newest valid configuration. With no valid copy it
// returns an empty configuration and, unless both slots are blank,
// ErrNoValidCopy; the Store is usable either way.
func Open(dev flash.Device, offA, offB int64) (*Store, Values, error) {
	bs := int64(dev.BlockSize())
	for _, o := range []int64{offA, offB} {
		if o < 0 || o%bs != 0 || o+bs > dev.Size() {
			return nil, nil, fmt.Errorf("confstore: slot at %#x is not an erase block of the device", o)
		}
	}
	if offA == offB {
		return nil, nil, errors.New("confstore: both slots at the same offset")
	}
	s := &Store{dev: dev, slots: [2]int64{offA, offB}, cur: -1, buf: make([]byte, bs)}
	var vals [2]Values
	for i, off := range s.slots {
		c := CopyState{Off: off}
		if _, err := dev.ReadAt(s.buf, off); err != nil {
			c.Err = err
		} else if seq, v, err := Decode(s.buf); err != nil {
			c.Err = err
		} else {
			c.Valid, c.Seq, vals[i] = true, seq, v
		}
		s.Copies[i] = c
	}
	a, b := s.Copies[0], s.Copies[1]
	switch {
	case a.Valid && (!b.Valid || !newer(b.Seq, a.Seq)):
		s.cur = 0
	case b.Valid:
		s.cur = 1
	}
	if s.cur >= 0 {
		s.seq = s.Copies[s.cur].Seq
		return s, vals[s.cur], nil
	}
	if errors.Is(a.Err, ErrBlank) && errors.Is(b.Err, ErrBlank) {
		return s, Values{}, nil
	}
	return s, Values{}, fmt.Errorf("%w (%v; %v)", ErrNoValidCopy, a, b)
}

// newer reports whether sequence number a is after b (serial arithmetic,
// so the counter may wrap).
func newer(a, b uint32) bool { return int32(a-b) > 0 }

// Seq returns the sequence number of the current copy (0 if none).
func (s *Store) Seq() uint32 { return s.seq }

// Save writes v as the new configuration. If it returns an error, or the
// power fails while it runs, the region still holds the previous
// configuration or v.
func (s *Store) Save(v Values) error {
	b, err := Encode(v, s.seq+1)
	if err != nil {
		return err
	}
	if len(b) > len(s.buf) {
		return fmt.Errorf("%w: %d bytes, slot is %d", ErrTooLarge, len(b), len(s.buf))
	}
	t := 0
	if s.cur == 0 {
		t = 1
	}
	off := s.slots[t]
	if err := s.erase(off); err != nil {
		return err
	}
	// Body first, commit mark last: until the mark is whole, Decode
	// rejects the slot and the other copy stays current.
	if err := s.dev.Program(off+4, b[4:]); err != nil {
		return fmt.Errorf("confstore: save to %#x: %w", off, err)
	}
	if err := s.dev.Program(off, b[:4]); err != nil {
		return fmt.Errorf("confstore: commit at %#x: %w", off, err)
	}
	s.Programmed += uint64(len(b))
	// Read the copy back through the decoder: what the next boot sees.
	if _, err := s.dev.ReadAt(s.buf[:len(b)], off); err != nil {
		return err
	}
	seq, _, err := Decode(s.buf[:len(b)])
	if err != nil || seq != s.seq+1 {
		return fmt.Errorf("confstore: copy at %#x does not read back: %v", off, err)
	}
	s.cur, s.seq = t, seq
	s.Copies[t] = CopyState{Off: off, Valid: true, Seq: seq}
	s.Saves++
	return nil
}

func (s *Store) erase(off int64) error {
	s.Erases++
	err := s.dev.Erase(off)
	if err != nil {
		if l, ok := s.dev.(Locker); ok && errors.Is(err, flash.ErrLocked) {
			if uerr := l.Unlock(off); uerr != nil {
				return fmt.Errorf("confstore: unlock %#x: %w", off, uerr)
			}
			s.Erases++
			err = s.dev.Erase(off)
		}
	}
	if err != nil {
		return fmt.Errorf("confstore: erase %#x: %w", off, err)
	}
	return nil
}
