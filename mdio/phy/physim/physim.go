// Package physim models clause-22 Ethernet PHYs and their link partners for
// tests of PHY and MAC drivers.
//
// The model reproduces what makes PHY code go wrong: BMCR.RESET that takes
// several reads to self-clear, autonegotiation that completes only some
// reads after the link comes up, link status that latches low (a flap
// between two reads shows in the first read only), a partner whose
// abilities decide the resolved mode, and flaps injected at any time.
package physim

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/mdio"
	"github.com/gowrt/gowrt/mdio/phy"
)

// Partner is the link partner at the other end of the cable.
type Partner struct {
	Connected bool
	// Ability is the partner's ANLPAR word (ANSelector8023 | AN* bits).
	Ability uint16
	// Gigabit abilities, as the partner would set 1000BASE-T status.
	FD1000, HD1000 bool
}

// GigabitPartner is a typical 1000/100/10 full- and half-duplex partner.
var GigabitPartner = Partner{Connected: true, Ability: phy.ANSelector8023 | phy.AN10HD | phy.AN10FD | phy.AN100HD | phy.AN100FD | phy.ANPause, FD1000: true, HD1000: true}

// PHY is one modelled PHY.
type PHY struct {
	mu sync.Mutex

	ID      uint32
	Gigabit bool
	// ResetReads is how many BMCR reads RESET stays set after a reset.
	ResetReads int
	// AnegReads is how many BMSR reads negotiation takes after it starts
	// with a partner connected.
	AnegReads int

	regs        [32]uint16
	partner     Partner
	resetLeft   int
	anegLeft    int
	anegRunning bool
	latchedDown bool // a link drop since the last BMSR read

	// Reads and Writes count bus transactions.
	Reads, Writes int
}

// New returns a PHY with id (OUI/model/revision), gigabit-capable or not.
func New(id uint32, gigabit bool) *PHY {
	p := &PHY{ID: id, Gigabit: gigabit, ResetReads: 3, AnegReads: 4}
	p.defaults()
	return p
}

func (p *PHY) defaults() {
	p.regs = [32]uint16{}
	p.regs[phy.RegBMCR] = phy.BMCRANEnable
	p.regs[phy.RegBMSR] = phy.BMSR100FD | phy.BMSR100HD | phy.BMSR10FD | phy.BMSR10HD | phy.BMSRANAbility
	if p.Gigabit {
		p.regs[phy.RegBMSR] |= phy.BMSRExtStatus
		p.regs[phy.RegExtStatus] = phy.ExtStatus1000TFD | phy.ExtStatus1000THD
		p.regs[phy.RegGBCR] = phy.GBCR1000FD | phy.GBCR1000HD
	}
	p.regs[phy.RegID1] = uint16(p.ID >> 16)
	p.regs[phy.RegID2] = uint16(p.ID)
	p.regs[phy.RegANAR] = phy.ANSelector8023 | phy.AN10HD | phy.AN10FD | phy.AN100HD | phy.AN100FD
	p.anegRunning = true
	p.anegLeft = p.AnegReads
}

// SetPartner plugs in (or changes) the link partner. Any change takes the
// link down (latched) and restarts negotiation, as a real re-plug does.
func (p *PHY) SetPartner(pt Partner) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.linkUp() {
		p.latchedDown = true
	}
	p.partner = pt
	p.anegRunning = true
	p.anegLeft = p.AnegReads
}

// Flap takes the link down and up again between two reads: only the
// latched-low BMSR bit and a renegotiation show it.
func (p *PHY) Flap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latchedDown = true
	p.anegRunning = true
	p.anegLeft = p.AnegReads
}

func (p *PHY) linkUp() bool {
	if !p.partner.Connected {
		return false
	}
	if p.regs[phy.RegBMCR]&phy.BMCRANEnable == 0 {
		return true
	}
	return !p.anegRunning
}

// Current returns the link as it is on the cable right now: down while
// negotiation runs or with no partner, else the resolved mode (forced
// mode: the BMCR bits). Device models use it to decide whether frames pass.
func (p *PHY) Current() phy.Link {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.linkUp() {
		return phy.Link{}
	}
	bmcr := p.regs[phy.RegBMCR]
	if bmcr&phy.BMCRANEnable == 0 {
		l := phy.Link{Up: true, Speed: 10, FullDuplex: bmcr&phy.BMCRFullDuplex != 0}
		if bmcr&phy.BMCRSpeed1000 != 0 {
			l.Speed = 1000
		} else if bmcr&phy.BMCRSpeed100 != 0 {
			l.Speed = 100
		}
		return l
	}
	l, _ := phy.Resolve(p.regs[phy.RegANAR], p.partner.Ability, p.regs[phy.RegGBCR], p.gbsr())
	return l
}

// Resolved returns the link the PHY would report once settled.
func (p *PHY) Resolved() phy.Link {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.partner.Connected {
		return phy.Link{}
	}
	l, _ := phy.Resolve(p.regs[phy.RegANAR], p.partner.Ability, p.regs[phy.RegGBCR], p.gbsr())
	return l
}

func (p *PHY) gbsr() uint16 {
	var v uint16
	if p.Gigabit && p.partner.Connected {
		if p.partner.FD1000 {
			v |= phy.GBSR1000FD
		}
		if p.partner.HD1000 {
			v |= phy.GBSR1000HD
		}
	}
	return v
}

// ReadReg is a management read of reg.
func (p *PHY) ReadReg(reg int) uint16 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Reads++
	switch reg {
	case phy.RegBMCR:
		if p.resetLeft > 0 {
			p.resetLeft--
			if p.resetLeft == 0 {
				p.defaults()
			}
			return phy.BMCRReset
		}
		return p.regs[phy.RegBMCR]
	case phy.RegBMSR:
		if p.anegRunning && p.partner.Connected {
			if p.anegLeft > 0 {
				p.anegLeft--
			} else {
				p.anegRunning = false
			}
		}
		v := p.regs[phy.RegBMSR]
		if p.linkUp() && !p.latchedDown {
			v |= phy.BMSRLink
		}
		if p.partner.Connected && !p.anegRunning {
			v |= phy.BMSRANComplete
		}
		p.latchedDown = false
		return v
	case phy.RegANLPAR:
		if !p.partner.Connected || p.anegRunning {
			return 0
		}
		return p.partner.Ability
	case phy.RegGBSR:
		if p.anegRunning {
			return 0
		}
		return p.gbsr()
	}
	if reg >= 0 && reg < 32 {
		return p.regs[reg]
	}
	return 0xFFFF
}

// WriteReg is a management write.
func (p *PHY) WriteReg(reg int, v uint16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Writes++
	switch reg {
	case phy.RegBMCR:
		if v&phy.BMCRReset != 0 {
			p.resetLeft = p.ResetReads
			if p.resetLeft == 0 {
				p.defaults()
			}
			if p.linkUp() {
				p.latchedDown = true
			}
			return
		}
		if v&phy.BMCRANRestart != 0 {
			if p.linkUp() {
				p.latchedDown = true
			}
			p.anegRunning = true
			p.anegLeft = p.AnegReads
		}
		p.regs[reg] = v &^ phy.BMCRANRestart
	case phy.RegBMSR, phy.RegID1, phy.RegID2, phy.RegANLPAR, phy.RegGBSR, phy.RegExtStatus:
		// read-only
	default:
		if reg >= 0 && reg < 32 {
			p.regs[reg] = v
		}
	}
}

// Bus is an ideal mdio.Bus over modelled PHYs (no MAC in between): for
// testing PHY drivers alone. Absent addresses read 0xFFFF like an
// unterminated bus.
type Bus struct {
	mu   sync.Mutex
	phys map[int]*PHY
	// Hook, if set, runs before every transaction (tests use it to force
	// goroutine interleavings).
	Hook func()
	mdio.Locker
}

// NewBus returns a bus with the given PHYs.
func NewBus(phys map[int]*PHY) *Bus { return &Bus{phys: phys, Locker: &sync.Mutex{}} }

func (b *Bus) Read(addr, reg int) (uint16, error) {
	if err := mdio.CheckAddr(addr, reg); err != nil {
		return 0, err
	}
	if b.Hook != nil {
		b.Hook()
	}
	b.mu.Lock()
	p := b.phys[addr]
	b.mu.Unlock()
	if p == nil {
		return 0xFFFF, nil
	}
	return p.ReadReg(reg), nil
}

func (b *Bus) Write(addr, reg int, v uint16) error {
	if err := mdio.CheckAddr(addr, reg); err != nil {
		return err
	}
	if b.Hook != nil {
		b.Hook()
	}
	b.mu.Lock()
	p := b.phys[addr]
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	p.WriteReg(reg, v)
	return nil
}

func (p *PHY) String() string { return fmt.Sprintf("physim PHY %#08x", p.ID) }
