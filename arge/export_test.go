package arge

import "github.com/gowrt/gowrt/mdio/phy"

// Deliberately wrong driver variants for the hazard tests.
const (
	BugEarlyFirst  = uint32(bugEarlyFirst)
	BugNoPreWrite  = uint32(bugNoPreWrite)
	BugNoPostRead  = uint32(bugNoPostRead)
	BugNoFlush     = uint32(bugNoFlush)
	BugNoTXBarrier = uint32(bugNoTXBarrier)
	BugNoRecovery  = uint32(bugNoRecovery)
)

// SetBugs switches the driver to a wrong variant.
func SetBugs(d *Driver, b uint32) { d.bugs = bug(b) }

// SetMIINoBarrier makes the MII poll without barriers.
func SetMIINoBarrier(m *MII, on bool) { m.noBarrier = on }

// SetPHY attaches a PHY after New (tests create it over the driver's MII).
func SetPHY(d *Driver, p *phy.PHY) { d.cfg.PHY = p }
