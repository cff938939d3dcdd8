//go:build mips || mipsle

// Package kernelirq is the gowrt kernel's root interrupt controller as
// package intr sees it, for bare-metal boards: an intr.Controller whose
// methods are kernel calls, and an intr.Source whose Wait is the kernel's
// blocking IRQWait. The kernel owns the controller's registers (its
// platform hooks drive them in trap context): it takes each interrupt,
// masks the line, ends its service and wakes the line's waiter, so no
// acknowledge follows the handler (NeedsAck is false) and a request that
// arrives meanwhile stays pending until the handler goroutine unmasks.
//
// A board describes its controller (name, lines, the lines the kernel
// keeps for itself, which triggers a line takes) and gets a dispatcher:
//
//	c := &kernelirq.Controller{ControllerName: "i8259", NumLines: 16, Reserved: 1<<2 | 1<<4}
//	d := kernelirq.NewDispatcher(c)
package kernelirq

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/kernel"
)

// Controller is the kernel's root controller as an intr.Controller.
type Controller struct {
	ControllerName string
	NumLines       int // at most 64
	// Reserved lines belong to the kernel (the console, a cascade):
	// they cannot be masked, waited on or registered.
	Reserved uint64
	// Trigger checks that line can take t (it is called for valid,
	// unreserved lines only); nil means every line is level-only.
	Trigger func(line int, t intr.Trigger) error
}

// Name implements intr.Controller.
func (c *Controller) Name() string { return c.ControllerName }

// Lines implements intr.Controller.
func (c *Controller) Lines() int { return c.NumLines }

// NeedsAck implements intr.Controller: the kernel ends the service when it
// takes the line.
func (c *Controller) NeedsAck() bool { return false }

// Check validates line: in range and not the kernel's.
func (c *Controller) Check(line int) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	if c.Reserved&(1<<uint(line)) != 0 {
		return fmt.Errorf("%w: %s line %d is the kernel's", intr.ErrLine, c.ControllerName, line)
	}
	return nil
}

// Mask implements intr.Controller.
func (c *Controller) Mask(line int) error {
	if err := c.Check(line); err != nil {
		return err
	}
	return kernel.IRQMask(line)
}

// Unmask implements intr.Controller.
func (c *Controller) Unmask(line int) error {
	if err := c.Check(line); err != nil {
		return err
	}
	return kernel.IRQUnmask(line)
}

// Ack implements intr.Controller: nothing to do (see NeedsAck).
func (c *Controller) Ack(line int) error { return c.Check(line) }

// Pending implements intr.Controller: the controller's raw requests.
func (c *Controller) Pending() uint64 { return kernel.IRQPending() }

// SetTrigger implements intr.Controller through the kernel's platform
// hook, after c.Trigger allowed it.
func (c *Controller) SetTrigger(line int, t intr.Trigger) error {
	if err := c.Check(line); err != nil {
		return err
	}
	if t != intr.Edge && t != intr.Level {
		return fmt.Errorf("%w: %v", intr.ErrTrigger, t)
	}
	if c.Trigger == nil {
		if t != intr.Level {
			return fmt.Errorf("%w: %s line %d is level-triggered", intr.ErrTrigger, c.ControllerName, line)
		}
		return nil
	}
	if err := c.Trigger(line, t); err != nil {
		return err
	}
	return kernel.IRQSetTrigger(line, t == intr.Level)
}

// Source delivers a Controller's lines to goroutines. Wait parks the
// goroutine in the Go scheduler, on the line's kernel descriptor
// (kernel.IRQFD) in the runtime's netpoller, and returns when the line
// fired (the count of coalesced occurrences) with the line masked. If the
// kernel has no descriptor to give, Wait blocks in kernel.IRQWait
// instead, a system call that holds a thread.
//
// Why the netpoller: a goroutine in a blocking system call leaves its P
// "in a system call", and the runtime's sysmon, which then polls every
// 20 µs, takes the P away and hands it to another thread; when the
// interrupt comes, the waiting thread must get a P back, and threads
// switch at every step. On a router serving a bulk upload that was some
// 1.7 k sysmon sleeps and 1.3 k futex calls per 32 MiB. Parked in the
// netpoller, the line's goroutine costs no thread, and an idle system's
// only thread waits in epoll_pwait, from which the interrupt wakes it.
//
// Close makes the current Wait on the line, or the next one if no
// goroutine is inside Wait, return intr.ErrClosed; a Wait after that opens
// the line again (a new Register).
type Source struct {
	c      *Controller
	mu     sync.Mutex
	opened uint64
	closed uint64
	lines  [64]*lineWait
}

// lineWait is one line's descriptor in the netpoller, and the result of
// the poll its RawConn.Read ran. Only the line's goroutine uses it
// after open.
type lineWait struct {
	line  int
	file  *os.File
	conn  syscall.RawConn // nil: the kernel gave no descriptor
	poll  func(fd uintptr) bool
	fired uint32
	err   error
}

// try polls the line; false (not fired) makes RawConn.Read park the
// goroutine until the descriptor is readable.
func (w *lineWait) try(uintptr) bool {
	n, _, err := kernel.IRQPoll(w.line)
	if err == syscall.EAGAIN {
		return false
	}
	w.fired, w.err = n, err
	return true
}

// NewSource returns the Source of c's lines.
func NewSource(c *Controller) *Source { return &Source{c: c} }

// NewDispatcher returns an intr.Dispatcher for c's lines.
func NewDispatcher(c *Controller) *intr.Dispatcher { return intr.NewDispatcher(c, NewSource(c)) }

func (s *Source) open(line int) (*lineWait, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bit := uint64(1) << uint(line)
	if s.closed&bit != 0 {
		s.closed &^= bit
		return nil, intr.ErrClosed
	}
	if s.opened&bit == 0 {
		if err := kernel.IRQOpen(line); err != nil {
			return nil, err
		}
		s.opened |= bit
	}
	w := s.lines[line]
	if w == nil {
		w = &lineWait{line: line}
		w.poll = w.try
		if fd, err := kernel.IRQFD(line); err == nil {
			w.file = os.NewFile(uintptr(fd), fmt.Sprintf("irq%d", line))
			if rc, err := w.file.SyscallConn(); err == nil {
				w.conn = rc
			}
		}
		s.lines[line] = w
	}
	return w, nil
}

// Wait implements intr.Source.
func (s *Source) Wait(line int) (uint32, error) {
	if err := s.c.Check(line); err != nil {
		return 0, err
	}
	w, err := s.open(line)
	if err != nil {
		return 0, err
	}
	var n uint32
	// A descriptor the netpoller could not take fails its first Read
	// ("unsupported file type"); the blocking call always works.
	if w.conn == nil || w.conn.Read(w.poll) != nil {
		n, err = kernel.IRQWait(line)
	} else {
		n, err = w.fired, w.err
	}
	if err == kernel.ErrIRQClosed {
		s.mu.Lock()
		s.closed &^= uint64(1) << uint(line) // this Wait consumed the close
		s.lines[line] = nil                  // the next open makes a new descriptor
		s.mu.Unlock()
		if w.file != nil {
			w.file.Close()
		}
		return 0, intr.ErrClosed
	}
	return n, err
}

// Close implements intr.Source.
func (s *Source) Close(line int) error {
	if err := s.c.Check(line); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bit := uint64(1) << uint(line)
	s.opened &^= bit
	s.closed |= bit
	return kernel.IRQClose(line)
}

var (
	_ intr.Controller = (*Controller)(nil)
	_ intr.Source     = (*Source)(nil)
)
