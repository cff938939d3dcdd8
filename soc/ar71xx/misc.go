package ar71xx

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/intr"
)

// MiscController is the MISC (APB) interrupt controller in the reset block:
// STATUS at 0x10, MASK at 0x14, 32 level lines, chained on CPU IP6.
// It implements intr.Controller; whether it must be acked, and how, is the
// Info's MiscAck, never a test of the chip in the caller.
type MiscController struct {
	name string
	r    barrier.Space
	ack  AckMethod
	mu   sync.Mutex
}

var _ intr.Controller = (*MiscController)(nil)

// NewMisc returns the MISC controller of the SoC described by info, over
// its reset block. It masks every line and clears latched status, as both
// Linux init paths do (ath79_misc_intc_domain_init / the legacy path).
func NewMisc(info *Info, reset barrier.Space) *MiscController {
	m := &MiscController{name: info.Family.String() + "-misc", r: reset, ack: info.MiscAck}
	m.r.Write32(RstMiscIntMask, 0)
	m.r.Write32(RstMiscIntStatus, 0)
	m.r.Barrier()
	m.r.Read32(RstMiscIntStatus)
	return m
}

func (m *MiscController) Name() string   { return m.name }
func (m *MiscController) Lines() int     { return MiscLines }
func (m *MiscController) NeedsAck() bool { return m.ack != AckNone }

// Mask disables a line: read-modify-write of MASK, then a read back so the
// write has reached the controller before the caller relies on it (Linux
// ar71xx_misc_irq_mask).
func (m *MiscController) Mask(line int) error {
	if err := intr.CheckLine(m, line); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	barrier.SetBits32(m.r, RstMiscIntMask, 1<<uint(line), 0)
	m.r.Barrier()
	m.r.Read32(RstMiscIntMask)
	return nil
}

// Unmask enables a line.
func (m *MiscController) Unmask(line int) error {
	if err := intr.CheckLine(m, line); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	barrier.SetBits32(m.r, RstMiscIntMask, 0, 1<<uint(line))
	m.r.Barrier()
	m.r.Read32(RstMiscIntMask)
	return nil
}

// Ack acknowledges a line after its handler cleared the device's cause.
//
// The sources conflict on how. Linux (arch/mips/ath79/irq.c) and OpenWrt
// (ar724x_misc_irq_ack) and older FreeBSD sys/mips/atheros/apb.c read
// STATUS, write it back with only this line's bit cleared, and read it
// again: the status bits are write-0-to-clear. The latest FreeBSD apb.c
// writes (1 << irq) instead, which on a write-0-to-clear register clears
// every *other* latched bit and keeps this one. We follow Linux: it is the
// sequence that is correct under the write-0-to-clear semantics every init
// path (writing 0 to STATUS) assumes. TestMiscAckClearsOnlyItsBit pins it
// against a write-0-to-clear model and shows the other form losing a latched
// line.
//
// Linux's form has a window: a bit that latches between the read and the
// write is written back as 0 and cleared. For the level sources on this
// controller that is harmless — a source still asserted latches its bit
// again at once (the ar71xxsim model does exactly that) — whereas writing
// ^bit, which would close the window on a write-0-to-clear register, would
// set every other bit if the register were plain read/write, which the
// sources do not rule out.
//
// On AR71xx/AR913x Ack does nothing: the status bit follows the source.
func (m *MiscController) Ack(line int) error {
	if err := intr.CheckLine(m, line); err != nil {
		return err
	}
	if m.ack == AckNone {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.r.Barrier()
	v := m.r.Read32(RstMiscIntStatus)
	m.r.Write32(RstMiscIntStatus, v&^(1<<uint(line)))
	m.r.Barrier()
	m.r.Read32(RstMiscIntStatus)
	return nil
}

// Pending returns STATUS & MASK (Linux ath79_misc_irq_handler; FreeBSD
// reads STATUS alone and would dispatch masked lines).
func (m *MiscController) Pending() uint64 {
	m.r.Barrier()
	return uint64(m.r.Read32(RstMiscIntStatus) & m.r.Read32(RstMiscIntMask))
}

// SetTrigger accepts Level only: the MISC sources are level outputs of
// on-chip blocks; there is no trigger-type register.
func (m *MiscController) SetTrigger(line int, t intr.Trigger) error {
	if err := intr.CheckLine(m, line); err != nil {
		return err
	}
	if t != intr.Level {
		return fmt.Errorf("%w: %s line %d is %s only", intr.ErrTrigger, m.name, line, intr.Level)
	}
	return nil
}
