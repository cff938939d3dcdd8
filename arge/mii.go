package arge

import (
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/mdio"
)

// MDIO timing (FreeBSD if_arge.c ARGE_MII_TIMEOUT, Linux ag71xx.c
// AG71XX_MDIO_RETRY / AG71XX_MDIO_DELAY): up to 1000 polls of the busy
// indicator 5 µs apart, about 5–10 ms in the worst case.
const (
	MDIORetries   = 1000
	MDIOPollDelay = 5 * time.Microsecond
)

// MII is a MAC's MII management interface, an mdio.Bus. On AR71xx all
// PHYs hang off GE0's interface; boards hand that one to every user.
//
// Every step is separated by a barrier and every poll of the busy
// indicator is preceded by one (barrier.Poll32): the command write must
// have reached the MAC before the indicator is read, or the indicator
// still shows the idle state of before the command and MII_STATUS holds
// the previous transaction's value — the AR934x bring-up failure.
type MII struct {
	r barrier.Space

	// Delay waits between polls; tests and models replace it.
	Delay func(time.Duration)

	tx   sync.Mutex // one transaction at a time
	user sync.Mutex // mdio.Locker: multi-transaction sequences
}

var (
	_ mdio.Bus    = (*MII)(nil)
	_ mdio.Locker = (*MII)(nil)
)

// NewMII returns the management interface of the MAC whose registers are r.
func NewMII(r barrier.Space) *MII {
	return &MII{r: r, Delay: time.Sleep}
}

// Reset resets the management block and sets MDC to ref/divisor at clock
// select index clk (see ar71xx.Info.MDIOClockIndex): MII_CFG = clk|RESET,
// ≥100 µs, MII_CFG = clk, ≥100 µs (FreeBSD arge_reset_miibus, Linux
// ag71xx_mdio_reset).
func (m *MII) Reset(clk uint32) {
	m.tx.Lock()
	defer m.tx.Unlock()
	m.r.Write32(RegMIICfg, clk|MIICfgReset)
	m.r.Barrier()
	m.Delay(100 * time.Microsecond)
	m.r.Write32(RegMIICfg, clk)
	m.r.Barrier()
	m.Delay(100 * time.Microsecond)
}

// Lock and Unlock implement mdio.Locker.
func (m *MII) Lock()   { m.user.Lock() }
func (m *MII) Unlock() { m.user.Unlock() }

// wait polls MII_INDICATOR until the interface is idle.
func (m *MII) wait() error {
	for i := 0; i < MDIORetries; i++ {
		if _, idle := barrier.Poll32(m.r, RegMIIIndicator, MIIIndAll, 0, 1); idle {
			return nil
		}
		m.Delay(MDIOPollDelay)
	}
	return mdio.ErrTimeout
}

func (m *MII) sync() { m.r.Barrier() }

// Read performs a clause-22 read: wait idle, CMD=0, ADDR, CMD=READ, wait
// idle, read STATUS, CMD=0 (FreeBSD arge_miibus_readreg; Linux also waits
// for idle first).
func (m *MII) Read(phy, reg int) (uint16, error) {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return 0, err
	}
	m.tx.Lock()
	defer m.tx.Unlock()
	if err := m.wait(); err != nil {
		return 0, fmt.Errorf("arge: MDIO read phy %d reg %d: %w (before command)", phy, reg, err)
	}
	m.r.Write32(RegMIICmd, 0)
	m.r.Write32(RegMIIAddr, uint32(phy)<<MIIAddrPHYShift|uint32(reg))
	m.sync()
	m.r.Write32(RegMIICmd, MIICmdRead)
	m.sync()
	if err := m.wait(); err != nil {
		m.r.Write32(RegMIICmd, 0)
		m.sync()
		return 0, fmt.Errorf("arge: MDIO read phy %d reg %d: %w", phy, reg, err)
	}
	m.sync()
	v := uint16(m.r.Read32(RegMIIStatus))
	m.r.Write32(RegMIICmd, 0)
	m.sync()
	return v, nil
}

// Write performs a clause-22 write: ADDR, CONTROL=val (which starts the
// cycle), wait idle.
func (m *MII) Write(phy, reg int, val uint16) error {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return err
	}
	m.tx.Lock()
	defer m.tx.Unlock()
	if err := m.wait(); err != nil {
		return fmt.Errorf("arge: MDIO write phy %d reg %d: %w (before command)", phy, reg, err)
	}
	m.r.Write32(RegMIIAddr, uint32(phy)<<MIIAddrPHYShift|uint32(reg))
	m.sync()
	m.r.Write32(RegMIIControl, uint32(val))
	m.sync()
	if err := m.wait(); err != nil {
		return fmt.Errorf("arge: MDIO write phy %d reg %d: %w", phy, reg, err)
	}
	return nil
}
