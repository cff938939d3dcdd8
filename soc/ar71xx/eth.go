package ar71xx

import "fmt"

// EthUnit is one of the SoC's Ethernet MACs (arge) as a board wires it:
// where its registers are, which CPU interrupt line it raises, which DDR
// write-buffer channel must be drained before reading what it wrote
// (FreeBSD ar71xxreg.h / files.ar71xx hints, Linux ar71xx_regs.h and
// arch/mips/ath79 dev-eth.c). The values are the same on every family
// member; what differs per chip (reset bits, the clock's PLL register,
// whether the flush channel exists) the SoC's Info decides when the unit
// is opened with SoC.Eth.
type EthUnit struct {
	Unit  int          // 0 (GE0) or 1 (GE1)
	Base  uint32       // physical base of the MAC's register window
	Size  uint32       // its size
	IRQ   int          // CPU interrupt line (CPUIRQGE0/1)
	Flush FlushChannel // DDR write-buffer channel
}

// The family's Ethernet units.
var (
	GE0 = EthUnit{Unit: 0, Base: PhysGE0, Size: MACSize, IRQ: CPUIRQGE0, Flush: FlushGE0}
	GE1 = EthUnit{Unit: 1, Base: PhysGE1, Size: MACSize, IRQ: CPUIRQGE1, Flush: FlushGE1}
)

// EthUnits lists the units by number.
var EthUnits = [2]EthUnit{GE0, GE1}

// Eth is one Ethernet unit of an identified SoC: the SoC-side services its
// MAC driver needs (reset line, clock for a link speed, DDR flush), bound
// to the unit, so a board hands the driver this instead of the SoC.
type Eth struct {
	soc   *SoC
	unit  EthUnit
	flush *ChannelFlusher // nil when the SoC has no channel for the unit
}

// Eth returns unit u of s.
func (s *SoC) Eth(u EthUnit) (*Eth, error) {
	if u.Unit < 0 || u.Unit >= len(EthUnits) || EthUnits[u.Unit] != u {
		return nil, fmt.Errorf("%w: %+v", ErrUnit, u)
	}
	e := &Eth{soc: s, unit: u}
	if s.Info.HasFlush(u.Flush) {
		e.flush = &ChannelFlusher{soc: s, ch: u.Flush}
	}
	return e, nil
}

// Unit returns the unit's instance data.
func (e *Eth) Unit() EthUnit { return e.unit }

// Info returns the SoC variant the unit belongs to.
func (e *Eth) Info() *Info { return e.soc.Info }

// Reset pulses the unit's MAC (and MDIO) reset (SoC.ResetMAC).
func (e *Eth) Reset() error { return e.soc.ResetMAC(e.unit.Unit) }

// SetClock programs the unit's clock for a link of mbps Mbit/s
// (SoC.SetEthSpeed).
func (e *Eth) SetClock(mbps int) error { return e.soc.SetEthSpeed(e.unit.Unit, Speed(mbps)) }

// Flush drains the unit's DDR write-buffer channel; nothing on SoCs
// without one.
func (e *Eth) Flush() error { return e.flush.Flush() }

// HasFlush reports whether the SoC has a flush channel for the unit.
func (e *Eth) HasFlush() bool { return e.flush != nil }
