// Package phy is a generic IEEE 802.3 clause-22 PHY driver: identification,
// reset, autonegotiation and a link state machine, over any mdio.Bus.
//
// A MAC driver calls Poll periodically (or when the PHY interrupts) and
// reprograms itself when Poll reports a change. Poll passes are mutually
// exclusive: a pass reads BMSR twice (link status latches low), then the
// autonegotiation result registers, and acts on the combination; two
// passes interleaving on the bus (a timer tick and a link interrupt) would
// combine one pass's BMSR with the other's partner ability and report a
// link that never existed. Every pass holds the PHY's lock for its whole
// duration, and holds the bus's mdio.Locker if it has one, so that also a
// switch driver paging registers on the same bus cannot split a pass.
package phy

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/mdio"
)

// Clause-22 registers and bits (IEEE 802.3 §22.2.4).
const (
	RegBMCR      = 0
	RegBMSR      = 1
	RegID1       = 2
	RegID2       = 3
	RegANAR      = 4
	RegANLPAR    = 5
	RegANER      = 6
	RegGBCR      = 9  // 1000BASE-T control
	RegGBSR      = 10 // 1000BASE-T status
	RegExtStatus = 15

	BMCRReset      = 1 << 15
	BMCRLoopback   = 1 << 14
	BMCRSpeed100   = 1 << 13
	BMCRANEnable   = 1 << 12
	BMCRPowerDown  = 1 << 11
	BMCRIsolate    = 1 << 10
	BMCRANRestart  = 1 << 9
	BMCRFullDuplex = 1 << 8
	BMCRSpeed1000  = 1 << 6

	BMSR100FD       = 1 << 14
	BMSR100HD       = 1 << 13
	BMSR10FD        = 1 << 12
	BMSR10HD        = 1 << 11
	BMSRExtStatus   = 1 << 8
	BMSRANComplete  = 1 << 5
	BMSRRemoteFault = 1 << 4
	BMSRANAbility   = 1 << 3
	BMSRLink        = 1 << 2

	ANSelector8023 = 0x0001
	AN10HD         = 1 << 5
	AN10FD         = 1 << 6
	AN100HD        = 1 << 7
	AN100FD        = 1 << 8
	ANPause        = 1 << 10
	ANAsymPause    = 1 << 11

	GBCR1000FD = 1 << 9
	GBCR1000HD = 1 << 8
	GBSR1000FD = 1 << 11
	GBSR1000HD = 1 << 10

	ExtStatus1000TFD = 1 << 13
	ExtStatus1000THD = 1 << 12
)

// Link is a resolved link state.
type Link struct {
	Up         bool
	Speed      int // 10, 100, 1000
	FullDuplex bool
	Pause      bool // symmetric pause negotiated
}

func (l Link) String() string {
	if !l.Up {
		return "down"
	}
	d := "half"
	if l.FullDuplex {
		d = "full"
	}
	return fmt.Sprintf("%d/%s", l.Speed, d)
}

// State is the link state machine's state.
type State uint8

const (
	StateDown State = iota // no link; autonegotiation running
	StateAneg              // link seen, negotiation not complete yet
	StateUp                // link up with a resolved mode
)

// Errors.
var (
	ErrNoPHY        = errors.New("phy: no PHY answers at this address")
	ErrResetTimeout = errors.New("phy: reset did not complete")
	ErrNoCommonMode = errors.New("phy: link partner shares no mode with us")
)

// ResetPolls bounds the wait for BMCR.RESET to self-clear.
const ResetPolls = 1000

// AnegTimeoutPolls is how many passes without a negotiated link are
// tolerated before negotiation is restarted.
const AnegTimeoutPolls = 10

// machine is the link state machine's memory between passes.
type machine struct {
	state    State
	aneg     bool // negotiation was started (not forced mode)
	anegWait int
	restarts int
}

// PHY is one clause-22 PHY.
type PHY struct {
	bus  mdio.Bus
	addr int
	ID   uint32

	mu      sync.Mutex
	sm      machine
	link    Link
	gigabit bool
}

// New probes the PHY at addr on bus: an ID of all ones or all zeros means
// nothing answered.
func New(bus mdio.Bus, addr int) (*PHY, error) {
	if err := mdio.CheckAddr(addr, 0); err != nil {
		return nil, err
	}
	id1, err := bus.Read(addr, RegID1)
	if err != nil {
		return nil, err
	}
	id2, err := bus.Read(addr, RegID2)
	if err != nil {
		return nil, err
	}
	id := uint32(id1)<<16 | uint32(id2)
	if id == 0 || id == 0xFFFF_FFFF {
		return nil, fmt.Errorf("%w: %d (ID %#08x)", ErrNoPHY, addr, id)
	}
	return &PHY{bus: bus, addr: addr, ID: id}, nil
}

// Addr returns the PHY's bus address.
func (p *PHY) Addr() int { return p.addr }

func (p *PHY) lockBus() func() {
	if l, ok := p.bus.(mdio.Locker); ok {
		l.Lock()
		return l.Unlock
	}
	return func() {}
}

// Reset soft-resets the PHY and waits for it to come out of reset, then
// learns whether it is gigabit-capable.
func (p *PHY) Reset() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	unlock := p.lockBus()
	defer unlock()
	if err := p.bus.Write(p.addr, RegBMCR, BMCRReset); err != nil {
		return err
	}
	done := false
	for i := 0; i < ResetPolls; i++ {
		v, err := p.bus.Read(p.addr, RegBMCR)
		if err != nil {
			return err
		}
		if v&BMCRReset == 0 {
			done = true
			break
		}
	}
	if !done {
		return fmt.Errorf("%w: PHY %d", ErrResetTimeout, p.addr)
	}
	bmsr, err := p.bus.Read(p.addr, RegBMSR)
	if err != nil {
		return err
	}
	p.gigabit = false
	if bmsr&BMSRExtStatus != 0 {
		ext, err := p.bus.Read(p.addr, RegExtStatus)
		if err != nil {
			return err
		}
		p.gigabit = ext&(ExtStatus1000TFD|ExtStatus1000THD) != 0
	}
	p.sm.state, p.link = StateDown, Link{}
	return nil
}

// Advertise is what autonegotiation offers.
type Advertise struct {
	HD10, FD10, HD100, FD100, HD1000, FD1000, Pause bool
}

// All is every mode a PHY may offer.
var All = Advertise{true, true, true, true, true, true, true}

// StartAutoneg writes the advertisement and (re)starts negotiation.
// Gigabit modes are only written to a gigabit-capable PHY.
func (p *PHY) StartAutoneg(a Advertise) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	unlock := p.lockBus()
	defer unlock()
	return p.startAutoneg(a)
}

func (p *PHY) startAutoneg(a Advertise) error {
	anar := uint16(ANSelector8023)
	for _, b := range []struct {
		on  bool
		bit uint16
	}{{a.HD10, AN10HD}, {a.FD10, AN10FD}, {a.HD100, AN100HD}, {a.FD100, AN100FD}, {a.Pause, ANPause}} {
		if b.on {
			anar |= b.bit
		}
	}
	if err := p.bus.Write(p.addr, RegANAR, anar); err != nil {
		return err
	}
	if p.gigabit {
		var gb uint16
		if a.HD1000 {
			gb |= GBCR1000HD
		}
		if a.FD1000 {
			gb |= GBCR1000FD
		}
		if err := p.bus.Write(p.addr, RegGBCR, gb); err != nil {
			return err
		}
	}
	if err := p.bus.Write(p.addr, RegBMCR, BMCRANEnable|BMCRANRestart); err != nil {
		return err
	}
	p.sm.state, p.link, p.sm.anegWait, p.sm.aneg = StateDown, Link{}, 0, true
	return nil
}

// Link returns the state machine's current link.
func (p *PHY) Link() Link {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.link
}

// Restarts counts negotiation restarts after timeouts.
func (p *PHY) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sm.restarts
}

// Poll runs one pass of the link state machine and returns the link and
// whether it changed since the previous pass.
func (p *PHY) Poll() (Link, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	unlock := p.lockBus()
	defer unlock()
	old := p.link
	l, err := p.pass(&p.sm, p.gigabit)
	if err != nil {
		return old, false, err
	}
	p.link = l
	return l, l != old, nil
}

func (p *PHY) pass(sm *machine, gigabit bool) (Link, error) {
	// BMSR link status latches low: the first read reports a drop since
	// the last read, the second the current state.
	if _, err := p.bus.Read(p.addr, RegBMSR); err != nil {
		return Link{}, err
	}
	bmsr, err := p.bus.Read(p.addr, RegBMSR)
	if err != nil {
		return Link{}, err
	}
	if bmsr&BMSRLink == 0 {
		// Like FreeBSD's mii_phy_tick: a link that stays down through
		// AnegTimeoutPolls passes gets its negotiation restarted (a
		// partner that came up in a mode we missed, a stuck exchange).
		sm.state = StateDown
		if sm.aneg {
			return Link{}, p.anegTick(sm)
		}
		return Link{}, nil
	}
	bmcr, err := p.bus.Read(p.addr, RegBMCR)
	if err != nil {
		return Link{}, err
	}
	if bmcr&BMCRANEnable == 0 {
		// Forced mode: the BMCR bits are the link.
		sm.state = StateUp
		l := Link{Up: true, Speed: 10, FullDuplex: bmcr&BMCRFullDuplex != 0}
		if bmcr&BMCRSpeed1000 != 0 {
			l.Speed = 1000
		} else if bmcr&BMCRSpeed100 != 0 {
			l.Speed = 100
		}
		return l, nil
	}
	if bmsr&BMSRANComplete == 0 {
		sm.state = StateAneg
		return Link{}, p.anegTick(sm)
	}
	anar, err := p.bus.Read(p.addr, RegANAR)
	if err != nil {
		return Link{}, err
	}
	lpa, err := p.bus.Read(p.addr, RegANLPAR)
	if err != nil {
		return Link{}, err
	}
	var gbcr, gbsr uint16
	if gigabit {
		if gbcr, err = p.bus.Read(p.addr, RegGBCR); err != nil {
			return Link{}, err
		}
		if gbsr, err = p.bus.Read(p.addr, RegGBSR); err != nil {
			return Link{}, err
		}
	}
	l, ok := Resolve(anar, lpa, gbcr, gbsr)
	if !ok {
		sm.state = StateDown
		return Link{}, nil
	}
	sm.state, sm.anegWait = StateUp, 0
	return l, nil
}

// anegTick counts a pass without a negotiated link and restarts
// negotiation when there have been too many.
func (p *PHY) anegTick(sm *machine) error {
	sm.anegWait++
	if sm.anegWait < AnegTimeoutPolls {
		return nil
	}
	sm.restarts++
	sm.anegWait = 0
	return p.bus.Write(p.addr, RegBMCR, BMCRANEnable|BMCRANRestart)
}

// Resolve picks the highest common mode (IEEE 802.3 Annex 28B.3 priority:
// 1000FD, 1000HD, 100FD, 100HD, 10FD, 10HD) from our advertisement, the
// partner's ability and the 1000BASE-T control/status registers. The
// 1000BASE-T status bits sit two places above the matching control bits.
func Resolve(anar, lpa, gbcr, gbsr uint16) (Link, bool) {
	common := anar & lpa
	gb := gbcr & (gbsr >> 2)
	pause := common&ANPause != 0
	switch {
	case gb&GBCR1000FD != 0:
		return Link{Up: true, Speed: 1000, FullDuplex: true, Pause: pause}, true
	case gb&GBCR1000HD != 0:
		return Link{Up: true, Speed: 1000, Pause: pause}, true
	case common&AN100FD != 0:
		return Link{Up: true, Speed: 100, FullDuplex: true, Pause: pause}, true
	case common&AN100HD != 0:
		return Link{Up: true, Speed: 100, Pause: pause}, true
	case common&AN10FD != 0:
		return Link{Up: true, Speed: 10, FullDuplex: true, Pause: pause}, true
	case common&AN10HD != 0:
		return Link{Up: true, Speed: 10, Pause: pause}, true
	}
	return Link{}, false
}
