package ar71xxsim

import (
	"fmt"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// stormLimit: deliveries of a MISC line with no change of its source
// before the model reports an interrupt storm.
const stormLimit = 64

// Reset is the reset block: REV_ID, RESET_MODULE, watchdog and the MISC
// interrupt controller. For the MISC lines it also plays the kernel's trap
// side, as an intr.Source: when an unmasked line's status is set it masks
// the line (in the MASK register, as the trap handler does) and wakes the
// line's handler goroutine.
type Reset struct {
	sys   *hwsim.System
	info  *ar71xx.Info
	rev   uint32
	regs  Regs
	latch bool // status bits latch until cleared (AR724x and later)
	// hooksTake: the code under test takes the interrupts (Config).
	hooksTake bool
	// chipResets counts FULL_CHIP resets requested.
	chipResets int
	// wdtHz is the watchdog timer's rate (the model's AHB or reference
	// clock, set with the PLLs); wdtResets counts resets it caused.
	wdtHz     uint32
	wdtResets int
	wdtFrac   uint64 // ns not yet turned into whole ticks

	source  uint32 // MISC sources currently asserted by devices
	status  uint32
	maskReg uint32

	fired  [ar71xx.MiscLines]uint32
	wake   [ar71xx.MiscLines]chan struct{}
	closed uint32
	streak [ar71xx.MiscLines]int
	storm  uint32

	// Deliveries counts handler wake-ups per line.
	Deliveries [ar71xx.MiscLines]uint64
}

var _ intr.Source = (*Reset)(nil)

func newReset(sys *hwsim.System, info *ar71xx.Info, rev uint32) *Reset {
	r := &Reset{sys: sys, info: info, rev: rev, latch: info.NeedsAck()}
	for i := range r.wake {
		r.wake[i] = make(chan struct{}, 1)
	}
	return r
}

// RaiseMisc asserts MISC source line (lock held). LowerMisc deasserts it.
func (r *Reset) RaiseMisc(line int) {
	bit := uint32(1) << line
	if r.source&bit == 0 {
		r.streak[line] = 0
	}
	r.source |= bit
	r.status |= bit
	r.take()
}

func (r *Reset) LowerMisc(line int) {
	bit := uint32(1) << line
	if r.source&bit != 0 {
		r.streak[line] = 0 // a real change of cause
	}
	r.source &^= bit
	if !r.latch {
		r.status &^= bit
	}
}

// Status returns the MISC status register as the hardware holds it.
func (r *Reset) Status() uint32 { return r.status }

// Stormed reports the lines the model saw storm.
func (r *Reset) Stormed() uint32 { return r.storm }

func (r *Reset) visibleStatus() uint32 {
	if r.latch {
		return r.status
	}
	return r.source // AR71xx: the status bit follows the source
}

// take is the trap side: every pending unmasked line is masked and
// delivered to its goroutine.
func (r *Reset) take() {
	if r.hooksTake {
		return
	}
	ready := r.visibleStatus() & r.maskReg
	for line := 0; ready != 0; line++ {
		bit := uint32(1) << line
		if ready&bit == 0 {
			continue
		}
		ready &^= bit
		r.maskReg &^= bit
		r.Deliveries[line]++
		r.streak[line]++
		if r.streak[line] > stormLimit && r.storm&bit == 0 {
			r.storm |= bit
			r.sys.Report(hwsim.Misuse{Kind: hwsim.UnackedInterrupt, Addr: uint64(line), Region: "misc",
				Detail: fmt.Sprintf("MISC line %d delivered %d times without its source changing", line, r.streak[line])})
		}
		r.fired[line]++
		select {
		case r.wake[line] <- struct{}{}:
		default:
		}
	}
}

func (r *Reset) ReadReg(off uint32, width int) uint32 {
	switch off {
	case ar71xx.RstRevID:
		return r.rev
	case ar71xx.RstMiscIntStatus:
		return r.visibleStatus()
	case ar71xx.RstMiscIntMask:
		return r.maskReg
	}
	return r.regs.ReadReg(off, width)
}

func (r *Reset) WriteReg(off uint32, width int, val uint32) {
	switch off {
	case ar71xx.RstRevID:
		return
	case ar71xx.RstMiscIntStatus:
		if r.latch {
			// Write-0-to-clear: a bit written 0 is cleared, 1 leaves it.
			cleared := r.status &^ val
			r.status &= val
			// A cleared bit whose source is still asserted latches again.
			r.status |= cleared & r.source
			for l := 0; cleared != 0; l++ {
				if cleared&(1<<l) != 0 {
					cleared &^= 1 << l
					if r.source&(1<<l) == 0 {
						r.streak[l] = 0
					}
				}
			}
		}
		// AR71xx: status follows the sources; writes are ignored.
		return
	case ar71xx.RstMiscIntMask:
		r.maskReg = val
		r.take()
		return
	case ar71xx.RstWdogCtrl:
		// LAST_RESET is status: writes keep it.
		val = val&ar71xx.WdogActionMask | r.regs.Get(ar71xx.RstWdogCtrl)&ar71xx.WdogLastReset
	case ar71xx.RstWdogTimer:
		r.wdtFrac = 0
	case r.resetModule():
		if val&resetFullChip != 0 {
			r.chipResets++
		}
	}
	r.regs.WriteReg(off, width, val)
}

// The model's own facts about RESET_MODULE: at 0x24 on AR71xx, 0x1C on
// every later family (where 0x1C is AR71xx's PCI interrupt mask); bit 24
// resets the whole chip (Linux ar71xx_regs.h, FreeBSD ar71xxreg.h,
// ar724xreg.h, ar91xxreg.h, ar933xreg.h, ar934xreg.h, qca955xreg.h).
const (
	rstModule71xx  = 0x24
	rstModuleOther = 0x1C
	resetFullChip  = 1 << 24
)

func (r *Reset) resetModule() uint32 {
	if r.info.Family == ar71xx.AR71xx {
		return rstModule71xx
	}
	return rstModuleOther
}

// ChipResets counts the whole-chip resets requested through RESET_MODULE.
func (r *Reset) ChipResets() int {
	var n int
	r.sys.Do(func() { n = r.chipResets })
	return n
}

// WatchdogHz is the rate the model's watchdog timer counts at.
func (r *Reset) WatchdogHz() uint32 { return r.wdtHz }

// Elapse runs the watchdog for d of the model's time (the model has no
// clock of its own: tests say how much time passes). While an action is
// set the timer counts down at WatchdogHz; at zero the action fires: a
// reset is counted (WatchdogResets), sets LAST_RESET and, as the chip
// comes out of reset, clears the action; a GPI raises the MISC watchdog
// line; an NMI is only counted as fired (no CPU is modelled).
func (r *Reset) Elapse(d time.Duration) {
	r.sys.Do(func() {
		action := r.regs.Get(ar71xx.RstWdogCtrl) & ar71xx.WdogActionMask
		if action == ar71xx.WdogActionNone || d <= 0 {
			return
		}
		ns := r.wdtFrac + uint64(d)*uint64(r.wdtHz)
		ticks := ns / uint64(time.Second)
		r.wdtFrac = ns % uint64(time.Second)
		left := uint64(r.regs.Get(ar71xx.RstWdogTimer))
		if ticks < left {
			r.regs.set(ar71xx.RstWdogTimer, uint32(left-ticks))
			return
		}
		r.regs.set(ar71xx.RstWdogTimer, 0)
		r.wdtFrac = 0
		switch action {
		case ar71xx.WdogActionReset:
			r.wdtResets++
			r.regs.set(ar71xx.RstWdogCtrl, ar71xx.WdogLastReset)
		case ar71xx.WdogActionGPI:
			r.RaiseMisc(ar71xx.MiscWatchdog)
			r.regs.set(ar71xx.RstWdogCtrl, ar71xx.WdogActionNone)
		default:
			r.regs.set(ar71xx.RstWdogCtrl, ar71xx.WdogActionNone)
		}
	})
}

// WatchdogResets counts the chip resets the watchdog caused.
func (r *Reset) WatchdogResets() int {
	var n int
	r.sys.Do(func() { n = r.wdtResets })
	return n
}

// Get returns a plain register's value (RESET_MODULE, watchdog).
func (r *Reset) Get(off uint32) uint32 { return r.regs.Get(off) }

// Wait implements intr.Source for the MISC lines.
func (r *Reset) Wait(line int) (uint32, error) {
	if line < 0 || line >= ar71xx.MiscLines {
		return 0, fmt.Errorf("%w: misc line %d", intr.ErrLine, line)
	}
	for {
		var n uint32
		closed := false
		r.sys.Do(func() {
			// Close wins over pending occurrences: a storming line
			// must still be able to unregister.
			if r.closed&(1<<line) != 0 {
				r.closed &^= 1 << line
				r.fired[line] = 0
				closed = true
				return
			}
			n = r.fired[line]
			r.fired[line] = 0
		})
		if n > 0 {
			return n, nil
		}
		if closed {
			return 0, intr.ErrClosed
		}
		<-r.wake[line]
	}
}

// Close implements intr.Source.
func (r *Reset) Close(line int) error {
	if line < 0 || line >= ar71xx.MiscLines {
		return fmt.Errorf("%w: misc line %d", intr.ErrLine, line)
	}
	r.sys.Do(func() { r.closed |= 1 << line })
	select {
	case r.wake[line] <- struct{}{}:
	default:
	}
	return nil
}
