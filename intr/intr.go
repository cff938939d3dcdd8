// Package intr is gowrt's interrupt contract: interrupt controllers, handler
// registration, and delivery of interrupts to goroutines.
//
// No driver code runs in trap context. Whoever takes the hardware interrupt
// (the bare-metal kernel's trap handler, or a hardware model in sim mode)
// masks the line at its controller and records that it fired; a Dispatcher
// goroutine per line then runs the driver's handler, acknowledges the line
// when the controller needs it, and unmasks it. An interrupt that fires while
// its handler is running is remembered by the Source and delivered again as
// soon as the handler returns: it is coalesced, never lost.
//
// The per-line sequence is:
//
//	Source.Wait  →  Handler  →  Controller.Ack (only if Controller.NeedsAck)  →  Controller.Unmask
//
// Acking after the handler matters on controllers whose status bit latches
// until cleared (AR724x/AR933x/AR934x/QCA955x MISC): the device's own cause
// must be cleared first, or the ack is undone at once. Controllers that need
// no ack (AR71xx MISC) are driven without one; this is per-controller data,
// never an if in a driver.
package intr

import (
	"errors"
	"fmt"
)

// Trigger is how a line signals.
type Trigger uint8

const (
	// Level lines stay asserted until the device's cause is cleared.
	Level Trigger = iota + 1
	// Edge lines signal a transition; an edge seen while masked must be
	// latched by the controller (or the Source) to be delivered later.
	Edge
)

func (t Trigger) String() string {
	switch t {
	case Level:
		return "level"
	case Edge:
		return "edge"
	}
	return fmt.Sprintf("Trigger(%d)", uint8(t))
}

// Controller is an interrupt controller's register-level operations.
// Implementations must be safe to call from a handler goroutine while the
// trap side masks other lines (on bare metal the kernel serialises them by
// disabling interrupts; in sim they are locked).
type Controller interface {
	// Name identifies the controller in errors and counters ("i8259", "ar934x-misc").
	Name() string
	// Lines is the number of lines; valid lines are 0..Lines()-1.
	Lines() int
	// NeedsAck reports whether a line must be acknowledged after its
	// handler has cleared the device's cause.
	NeedsAck() bool
	Mask(line int) error
	Unmask(line int) error
	// Ack acknowledges (EOI) a line. Controllers that need no ack return nil.
	Ack(line int) error
	// Pending returns the set of lines currently asserted, bit n = line n.
	Pending() uint64
	// SetTrigger configures a line's trigger type; controllers with fixed
	// types return ErrTrigger for the type they do not support.
	SetTrigger(line int, t Trigger) error
}

// Source delivers the occurrences of interrupt lines to goroutines. It is
// implemented by the kernel on bare metal and by the simulation core in sim
// mode.
type Source interface {
	// Wait blocks until line has fired at least once since the previous
	// Wait for that line returned, and returns how many times it fired
	// (at least 1; occurrences are coalesced, never dropped). The line is
	// masked at its controller when Wait returns. Wait returns ErrClosed
	// after Close(line).
	Wait(line int) (fired uint32, err error)
	// Close makes a current or future Wait(line) return ErrClosed.
	Close(line int) error
}

// Errors returned by this package. They wrap with the line and controller.
var (
	ErrLine       = errors.New("intr: no such line")
	ErrRegistered = errors.New("intr: line already has a handler")
	ErrNotHandled = errors.New("intr: line has no handler")
	ErrTrigger    = errors.New("intr: trigger type not supported on this line")
	ErrClosed     = errors.New("intr: line closed")
)

// CheckLine returns a wrapped ErrLine unless 0 <= line < c.Lines().
// Controllers use it so every misuse reads the same way.
func CheckLine(c Controller, line int) error {
	if line < 0 || line >= c.Lines() {
		return fmt.Errorf("%w: %s line %d (has %d)", ErrLine, c.Name(), line, c.Lines())
	}
	return nil
}
