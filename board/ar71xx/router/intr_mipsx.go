//go:build mips || mipsle

package router

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// rootController is the kernel's root interrupt controller on this family
// (soc/ar71xx/platform.go): the MISC controller's 32 lines, then the CPU
// pins IP2-IP5 as lines ar71xx.LineIP2..LineIP2+3. The kernel owns the
// registers: it takes each interrupt in trap context, masks the line,
// ends its service (the MISC EOI on the chips whose status latches) and
// wakes the line's waiter; these methods reach it through kernel calls.
// The Ethernet lines are CPU pins, level inputs the MAC drops once its
// cause is cleared, so no acknowledge follows the handler.
type rootController struct{}

// The console UART's MISC line belongs to the kernel.
const reservedLines = uint64(1) << ar71xx.MiscUART

func (rootController) Name() string   { return "ar71xx-root" }
func (rootController) Lines() int     { return ar71xx.IntrLines }
func (rootController) NeedsAck() bool { return false }

func (c rootController) check(line int) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	if reservedLines&(1<<uint(line)) != 0 {
		return fmt.Errorf("%w: %s line %d is the kernel's console", intr.ErrLine, c.Name(), line)
	}
	return nil
}

func (c rootController) Mask(line int) error {
	if err := c.check(line); err != nil {
		return err
	}
	return kernel.IRQMask(line)
}

func (c rootController) Unmask(line int) error {
	if err := c.check(line); err != nil {
		return err
	}
	return kernel.IRQUnmask(line)
}

// Ack is a no-op: the kernel ends the service when it takes the line.
func (c rootController) Ack(line int) error { return c.check(line) }

func (rootController) Pending() uint64 { return kernel.IRQPending() }

// SetTrigger: every line is level-triggered (soc/ar71xx/baremetal's
// platformIntrSetLevel).
func (c rootController) SetTrigger(line int, t intr.Trigger) error {
	if err := c.check(line); err != nil {
		return err
	}
	if t != intr.Level {
		return fmt.Errorf("%w: %s line %d is level-triggered", intr.ErrTrigger, c.Name(), line)
	}
	return nil
}

// kernelSource delivers root controller lines to goroutines through the
// kernel's blocking IRQWait (as board/malta's Source does for the i8259).
type kernelSource struct {
	mu     sync.Mutex
	opened uint64
	closed uint64
}

func (s *kernelSource) open(line int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	bit := uint64(1) << uint(line)
	if s.closed&bit != 0 {
		s.closed &^= bit
		return intr.ErrClosed
	}
	if s.opened&bit != 0 {
		return nil
	}
	if err := kernel.IRQOpen(line); err != nil {
		return err
	}
	s.opened |= bit
	return nil
}

// Wait implements intr.Source.
func (s *kernelSource) Wait(line int) (uint32, error) {
	if err := (rootController{}).check(line); err != nil {
		return 0, err
	}
	if err := s.open(line); err != nil {
		return 0, err
	}
	n, err := kernel.IRQWait(line)
	if err == kernel.ErrIRQClosed {
		s.mu.Lock()
		s.closed &^= uint64(1) << uint(line)
		s.mu.Unlock()
		return 0, intr.ErrClosed
	}
	return n, err
}

// Close implements intr.Source.
func (s *kernelSource) Close(line int) error {
	if err := (rootController{}).check(line); err != nil {
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
	_ intr.Controller = rootController{}
	_ intr.Source     = (*kernelSource)(nil)
)
