// Package power is the driver side of Atheros 802.11n MAC power
// management: the register sequences that wake the MAC and put it to
// network or full sleep, and the refcounted force-awake (package
// powersave) that every register-touching path holds while it works.
//
// FreeBSD's ath(4) keeps a reference count of code paths holding the chip
// awake and a target state applied when the count drops to zero
// (sc_powersave_refcnt, sc_target_powerstate in if_ath.c). A scheme without
// the count breaks as soon as two paths overlap: A wakes the chip and
// works, B finishes and puts the chip to sleep, A reads 0xdeadbeef. Here
// the count is a powersave.Domain whose hooks run under its lock, so a wake
// and a sleep never interleave.
//
// Wake sequence (FreeBSD ar5416SetPowerModeAwake, facts only): if the RTC
// reports SHUTDOWN, take it out of reset (RTC_RESET.EN); set
// FORCE_WAKE.EN; poll RTC_STATUS for ON, re-asserting FORCE_WAKE.EN each
// time, for a bounded time; then clear STA_ID1.PWR_SAV. Network sleep
// sets PWR_SAV and clears FORCE_WAKE.EN; full sleep additionally asserts
// host-interface reset (AR_RC) and holds the RTC in reset.
package power

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/ath/athsim"
	"github.com/gowrt/gowrt/powersave"
)

// Regs is 32-bit register access to the MAC (a bus-space region).
//
// A Regs that also has a Barrier method (a barrier.Space, whose writes
// may be posted) gets a Barrier after every write the wake and sleep
// sequences make: they are ordered steps (set FORCE_WAKE, then poll
// RTC_STATUS; set PWR_SAV, then drop FORCE_WAKE), and a status read that
// overtook a still-posted sleep write would see the chip "on" just before
// it goes to sleep, leaving the driver's next accesses to hit a sleeping
// MAC (ath/ar9300's tests hang without it). FreeBSD's
// ar5416SetPowerModeAwake orders the same steps with OS_REG_WRITE and
// OS_DELAY.
type Regs interface {
	Read32(off uint32) uint32
	Write32(off, v uint32)
}

// orderedRegs is a Regs whose every write is completed before the next
// access.
type orderedRegs struct {
	Regs
	b interface{ Barrier() }
}

func (o orderedRegs) Write32(off, v uint32) {
	o.Regs.Write32(off, v)
	o.b.Barrier()
}

// Register offsets and bits (FreeBSD ar5416reg.h; same values as the
// model, which documents them).
const (
	regRC          = athsim.RegRC
	rcAHB          = athsim.RCAHB
	rcHostIF       = athsim.RCHostIF
	regRTCReset    = athsim.RegRTCReset
	rtcResetEn     = athsim.RTCResetEn
	regRTCStatus   = athsim.RegRTCStatus
	rtcStatusMask  = athsim.RTCStatusMask
	rtcStatusShut  = athsim.RTCStatusShut
	rtcStatusOn    = athsim.RTCStatusOn
	regForceWake   = athsim.RegRTCForceWake
	forceWakeEn    = athsim.ForceWakeEn
	forceWakeOnInt = athsim.ForceWakeOnInt
	regSTAID1      = athsim.RegSTAID1
	staID1PwrSav   = athsim.STAID1PwrSav
)

// Mode is a power state the driver programs.
type Mode int

const (
	Awake Mode = iota
	FullSleep
	NetworkSleep
)

func (m Mode) String() string {
	switch m {
	case Awake:
		return "AWAKE"
	case FullSleep:
		return "FULL_SLEEP"
	case NetworkSleep:
		return "NETWORK_SLEEP"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// WakePolls bounds the RTC status polls of a wake (ar5416 polls up to
// 200 ms in 50 µs steps: 4000).
const WakePolls = 4000

// ErrNoWake is returned when the chip does not report ON in time.
var ErrNoWake = errors.New("ath/power: chip did not wake")

// Chip is the driver's power state for one MAC.
type Chip struct {
	regs Regs
	dom  *powersave.Domain

	mu     sync.Mutex // guards target and cur (taken inside the Domain hooks)
	target Mode       // applied when no path holds the chip awake
	cur    Mode
}

// New returns the power manager for a MAC at regs. The chip is assumed to
// be in full sleep; the target when idle is network sleep.
func New(name string, regs Regs) *Chip {
	if b, ok := regs.(interface{ Barrier() }); ok {
		regs = orderedRegs{regs, b}
	}
	c := &Chip{regs: regs, target: NetworkSleep, cur: FullSleep}
	c.dom = powersave.New(name, (*device)(c))
	return c
}

// device adapts Chip to powersave.Device.
type device Chip

func (d *device) Wake() error  { return (*Chip)(d).program(Awake) }
func (d *device) Sleep() error { return (*Chip)(d).program((*Chip)(d).Target()) }

// Target returns the state the chip goes to when nobody holds it.
func (c *Chip) Target() Mode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.target
}

// Current returns the state last programmed.
func (c *Chip) Current() Mode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// program runs the register sequence for m. It is called with the
// Domain's lock held (from its hooks), so sequences never interleave.
func (c *Chip) program(m Mode) error {
	r := c.regs
	if m != Awake && c.Current() != Awake {
		// Going from one sleep state to another: the sleep sequences
		// touch PCU registers (STA_ID1), so wake the chip first rather
		// than write to a sleeping MAC.
		if err := c.program(Awake); err != nil {
			return err
		}
	}
	var err error
	switch m {
	case Awake:
		err = c.wake()
	case NetworkSleep:
		r.Write32(regSTAID1, r.Read32(regSTAID1)|staID1PwrSav)
		r.Write32(regForceWake, r.Read32(regForceWake)&^forceWakeEn)
	case FullSleep:
		r.Write32(regSTAID1, r.Read32(regSTAID1)|staID1PwrSav)
		r.Write32(regForceWake, r.Read32(regForceWake)&^forceWakeEn)
		r.Write32(regRC, rcAHB|rcHostIF)
		r.Write32(regRTCReset, 0)
	default:
		return fmt.Errorf("ath/power: cannot program %v", m)
	}
	if err == nil {
		c.mu.Lock()
		c.cur = m
		c.mu.Unlock()
	}
	return err
}

func (c *Chip) wake() error {
	r := c.regs
	if r.Read32(regRTCStatus)&rtcStatusMask == rtcStatusShut {
		// Power-on reset: release host-interface reset and the RTC.
		r.Write32(regRC, 0)
		r.Write32(regRTCReset, rtcResetEn)
	}
	r.Write32(regForceWake, forceWakeEn|forceWakeOnInt)
	for i := 0; i < WakePolls; i++ {
		if r.Read32(regRTCStatus)&rtcStatusMask == rtcStatusOn {
			r.Write32(regSTAID1, r.Read32(regSTAID1)&^staID1PwrSav)
			return nil
		}
		r.Write32(regForceWake, forceWakeEn|forceWakeOnInt)
	}
	return fmt.Errorf("%w after %d polls", ErrNoWake, WakePolls)
}

// Hold keeps the chip awake until the matching Release; every path that
// touches MAC registers brackets them with Hold/Release (or uses Do).
func (c *Chip) Hold() error { return c.dom.Wake() }

// Release drops a hold; the chip goes to the target state at zero.
func (c *Chip) Release() error { return c.dom.Release() }

// Do runs f with the chip held awake.
func (c *Chip) Do(f func() error) error { return c.dom.Do(f) }

// Holds returns the number of paths holding the chip awake.
func (c *Chip) Holds() int { return c.dom.Holds() }

// SetTarget sets the state for when nobody holds the chip. If nobody holds
// it now, the state is programmed at once (through a wake/sleep cycle so
// it runs under the Domain's lock).
func (c *Chip) SetTarget(m Mode) error {
	if m == Awake {
		return fmt.Errorf("ath/power: the idle target cannot be AWAKE; hold the chip instead")
	}
	c.mu.Lock()
	c.target = m
	c.mu.Unlock()
	if c.dom.Holds() > 0 {
		return nil
	}
	return c.Do(func() error { return nil })
}

// AllVAPsDown powers the chip off when the last interface goes down.
func (c *Chip) AllVAPsDown() error { return c.SetTarget(FullSleep) }

// VAPUp lets the chip use network sleep again when an interface comes up.
func (c *Chip) VAPUp() error { return c.SetTarget(NetworkSleep) }

// Suspend powers the chip off; it fails if a path still holds the chip.
// Holds fail until Resume.
func (c *Chip) Suspend() error {
	c.mu.Lock()
	c.target = FullSleep
	c.mu.Unlock()
	return c.dom.Close(false)
}

// Resume allows holds again; the chip stays off until the next Hold.
func (c *Chip) Resume() { c.dom.Reopen() }

// Detach powers the chip off even if paths still hold it (they will get
// errors on their next Hold).
func (c *Chip) Detach() error {
	c.mu.Lock()
	c.target = FullSleep
	c.mu.Unlock()
	return c.dom.Close(true)
}

// Reset runs f (the chip reset sequence) with the chip awake: a reset
// always wakes the chip first.
func (c *Chip) Reset(f func(Regs) error) error {
	return c.Do(func() error { return f(c.regs) })
}
