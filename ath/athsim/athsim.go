// Package athsim is a hostile model of the power-management side of an
// Atheros AR5416-family 802.11n MAC (AR913x/AR9xxx WMAC): the RTC block with
// its reset, status and force-wake registers, and a MAC/PCU register file
// that only answers while the chip is awake.
//
// Hazards reproduced (each has a TestHazard* in package ath/power):
//
//   - A register read outside the always-on ranges while the chip is not
//     awake returns 0xdeadbeef (the symptom reported for sleeping Atheros
//     MACs), and a write is dropped; both are counted as violations.
//   - Waking is not instantaneous: after FORCE_WAKE is set the RTC status
//     reads WAKEUP for WakePolls status reads before it reads ON; the MAC
//     answers only from then on.
//   - From full sleep (RTC SHUTDOWN) force-wake alone does nothing: the
//     RTC must be taken out of reset first (RTC_RESET.EN), as the ar5416
//     wake sequence does after a power-on reset.
//   - Optionally the chip refuses to wake for a number of attempts (the
//     FreeBSD source warns that it "sometimes" does not wake).
//
// Register facts (offsets, bits) are from FreeBSD
// sys/dev/ath/ath_hal/ar5416/ar5416reg.h and ar5416_power.c, and Linux
// ath9k reg.h; the always-on ranges from FreeBSD ah_osdep.c
// (ath_hal_reg_whilst_asleep): 0x4000–0x4fff (host interface),
// 0x6000–0x6fff and 0x7000–0x7fff (RTC).
//
// Accesses are serialised by the model (one bus), so it may be shared by
// goroutines; Yield, if set, is called after every access so tests can
// shake interleavings.
package athsim

import "sync"

// Register offsets and bits.
const (
	RegRC    = 0x4000 // AR_RC: reset control (host interface block)
	RCAHB    = 0x00000001
	RCHostIF = 0x00000100

	RegRTCReset = 0x7040 // AR_RTC_RESET
	RTCResetEn  = 0x00000001

	RegRTCStatus    = 0x7044 // AR_RTC_STATUS, state in bits 3:0
	RTCStatusMask   = 0x0000000f
	RTCStatusShut   = 0x1
	RTCStatusOn     = 0x2
	RTCStatusSleep  = 0x4
	RTCStatusWakeup = 0x8

	RegRTCForceWake = 0x704c // AR_RTC_FORCE_WAKE
	ForceWakeEn     = 0x00000001
	ForceWakeOnInt  = 0x00000002

	RegSTAID0    = 0x8000     // AR_STA_ID0: MAC address low 32 bits (PCU)
	RegSTAID1    = 0x8004     // AR_STA_ID1
	STAID1PwrSav = 0x00040000 // PwrMgt bit in self-generated frames
	RegTSFL32    = 0x804c     // AR_TSF_L32 (PCU)
	RegIMR       = 0x00a0     // AR_IMR (MAC)

	// Dead is what a sleeping MAC returns.
	Dead = 0xdeadbeef
)

// AlwaysOn reports whether off may be accessed whatever the power state.
func AlwaysOn(off uint32) bool {
	return off >= 0x4000 && off < 0x5000 || off >= 0x6000 && off < 0x8000
}

// State is the chip's real power state.
type State int

const (
	Shutdown State = iota // full sleep: RTC in reset
	Sleep                 // network sleep
	Waking
	Awake
)

func (s State) String() string {
	return [...]string{"SHUTDOWN", "SLEEP", "WAKEUP", "ON"}[s]
}

// Chip is the model.
type Chip struct {
	mu sync.Mutex
	// WakePolls is how many RTC status reads show WAKEUP after force-wake
	// before the chip is on (default 0: the first read shows ON).
	WakePolls int
	// RefuseWakes makes the next n wake attempts fail (status stays SLEEP).
	RefuseWakes int
	// Yield is called after every access, outside the model's lock.
	Yield func()

	state      State
	polls      int
	regs       map[uint32]uint32
	violations uint64
	deadReads  uint64
	dropped    uint64
}

// New returns a chip in full sleep (as after power-on, before attach).
func New() *Chip {
	return &Chip{state: Shutdown, regs: map[uint32]uint32{RegSTAID0: 0x33221100, RegSTAID1: 0x5544}}
}

func (c *Chip) yield() {
	if c.Yield != nil {
		c.Yield()
	}
}

// State returns the real power state.
func (c *Chip) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Violations returns the number of MAC accesses made while not awake, and
// of those how many were reads answered with 0xdeadbeef.
func (c *Chip) Violations() (total, deadReads uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.violations, c.deadReads
}

// Read32 reads a register.
func (c *Chip) Read32(off uint32) uint32 {
	c.mu.Lock()
	v := c.read(off)
	c.mu.Unlock()
	c.yield()
	return v
}

func (c *Chip) read(off uint32) uint32 {
	switch {
	case off == RegRTCStatus:
		switch c.state {
		case Shutdown:
			return RTCStatusShut
		case Sleep:
			return RTCStatusSleep
		case Waking:
			if c.polls > 0 {
				c.polls--
				return RTCStatusWakeup
			}
			c.state = Awake
			return RTCStatusOn
		}
		return RTCStatusOn
	case AlwaysOn(off):
		return c.regs[off]
	case c.state != Awake:
		c.violations++
		c.deadReads++
		return Dead
	case off == RegTSFL32:
		c.regs[off] += 17 // time moves on
	}
	return c.regs[off]
}

// Peek returns a register's stored value without any power-state check
// or side effect (for tests inspecting the model).
func (c *Chip) Peek(off uint32) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.regs[off]
}

// Write32 writes a register.
func (c *Chip) Write32(off, v uint32) {
	c.mu.Lock()
	c.write(off, v)
	c.mu.Unlock()
	c.yield()
}

func (c *Chip) write(off, v uint32) {
	if !AlwaysOn(off) && c.state != Awake {
		c.violations++
		c.dropped++
		return
	}
	c.regs[off] = v
	switch off {
	case RegRTCReset:
		if v&RTCResetEn == 0 {
			c.state = Shutdown // RTC held in reset: full sleep
		} else if c.state == Shutdown {
			c.state = Sleep // out of reset, not yet forced awake
			if c.regs[RegRTCForceWake]&ForceWakeEn != 0 {
				c.forceWake()
			}
		}
	case RegRTCForceWake:
		if v&ForceWakeEn != 0 {
			c.forceWake()
		} else if c.state != Shutdown {
			c.state = Sleep
		}
	}
}

func (c *Chip) forceWake() {
	switch c.state {
	case Shutdown:
		return // needs RTC_RESET.EN first
	case Sleep:
		if c.RefuseWakes > 0 {
			c.RefuseWakes--
			return
		}
		c.state, c.polls = Waking, c.WakePolls
	}
}
