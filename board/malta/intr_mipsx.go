//go:build mips || mipsle

package malta

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/kernel"
	soc "github.com/gowrt/gowrt/soc/malta"
)

// PIC is the PIIX4 i8259 pair as an intr.Controller. The kernel owns the
// chips: it takes each interrupt in trap context (OCW3 poll), masks the
// line, sends the EOI at once and wakes the line's Source.Wait; these
// methods reach the chips through kernel calls, serialised with the trap
// handler. Because the line is masked from the moment it is taken until
// the handler goroutine unmasks it, no separate acknowledge is needed
// (NeedsAck is false), and an edge that arrives meanwhile is latched in the
// i8259's request register and delivered on unmask.
type PIC struct{}

// Lines that belong to the kernel (cascade, console) cannot be registered.
var reserved = uint16(1<<soc.IRQCascade | 1<<soc.IRQCOM1)

func (PIC) Name() string   { return "i8259" }
func (PIC) Lines() int     { return soc.NumIRQ }
func (PIC) NeedsAck() bool { return false }

func (p PIC) check(line int) error {
	if err := intr.CheckLine(p, line); err != nil {
		return err
	}
	if reserved&(1<<line) != 0 {
		return fmt.Errorf("%w: i8259 line %d is the kernel's", intr.ErrLine, line)
	}
	return nil
}

func (p PIC) Mask(line int) error {
	if err := p.check(line); err != nil {
		return err
	}
	return kernel.IRQMask(line)
}

func (p PIC) Unmask(line int) error {
	if err := p.check(line); err != nil {
		return err
	}
	return kernel.IRQUnmask(line)
}

// Ack is a no-op: the kernel sends the EOI when it takes the interrupt.
func (p PIC) Ack(line int) error { return p.check(line) }

// Pending returns the request registers of both chips.
func (PIC) Pending() uint64 { return kernel.IRQPending() }

// SetTrigger programs the ELCR. IRQ 0, 1, 2, 8 and 13 are edge-only.
func (p PIC) SetTrigger(line int, t intr.Trigger) error {
	if err := p.check(line); err != nil {
		return err
	}
	switch t {
	case intr.Edge:
		return kernel.IRQSetTrigger(line, false)
	case intr.Level:
		if line <= 2 || line == 8 || line == 13 {
			return fmt.Errorf("%w: i8259 line %d is edge-only", intr.ErrTrigger, line)
		}
		return kernel.IRQSetTrigger(line, true)
	}
	return fmt.Errorf("%w: %v", intr.ErrTrigger, t)
}

// Source delivers i8259 lines to goroutines through the kernel: Wait is a
// blocking system call that returns when the line fired (the count of
// coalesced occurrences) with the line masked.
//
// Close makes the current Wait on the line, or the next one if no
// goroutine is inside Wait, return intr.ErrClosed; a Wait after that opens
// the line again (a new Register).
type Source struct {
	mu     sync.Mutex
	opened uint16
	closed uint16
}

func (s *Source) open(line int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed&(1<<line) != 0 {
		s.closed &^= 1 << line
		return intr.ErrClosed
	}
	if s.opened&(1<<line) != 0 {
		return nil
	}
	if err := kernel.IRQOpen(line); err != nil {
		return err
	}
	s.opened |= 1 << line
	return nil
}

// Wait implements intr.Source.
func (s *Source) Wait(line int) (uint32, error) {
	if err := (PIC{}).check(line); err != nil {
		return 0, err
	}
	if err := s.open(line); err != nil {
		return 0, err
	}
	n, err := kernel.IRQWait(line)
	if err == kernel.ErrIRQClosed {
		s.mu.Lock()
		s.closed &^= 1 << line // this Wait consumed the close
		s.mu.Unlock()
		return 0, intr.ErrClosed
	}
	return n, err
}

// Close implements intr.Source.
func (s *Source) Close(line int) error {
	if err := (PIC{}).check(line); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened &^= 1 << line
	s.closed |= 1 << line
	return kernel.IRQClose(line)
}

// NewDispatcher returns an intr.Dispatcher for the i8259 pair.
func NewDispatcher() *intr.Dispatcher { return intr.NewDispatcher(PIC{}, &Source{}) }

var (
	_ intr.Controller = PIC{}
	_ intr.Source     = (*Source)(nil)
)
