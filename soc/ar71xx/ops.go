package ar71xx

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
)

// Regions are the register blocks the SoC operations touch.
type Regions struct {
	DDR   barrier.Space // 0x1800_0000
	PLL   barrier.Space // 0x1805_0000
	Reset barrier.Space // 0x1806_0000
	GMAC  barrier.Space // 0x1807_0000
}

// SoC is one identified chip plus its register blocks: the operations
// drivers need from the SoC (reset lines, DDR write-buffer flush, Ethernet
// clocking) behave per the chip's Info.
type SoC struct {
	Info *Info
	r    Regions

	// Delay waits at least d; tests replace it. Defaults to time.Sleep.
	Delay func(d time.Duration)

	// resetMu serialises read-modify-writes of RESET_MODULE (Linux
	// ath79_device_reset_set takes a spinlock for the same reason).
	resetMu sync.Mutex
	// pllMu serialises PLL programming sequences.
	pllMu sync.Mutex
	// flushMu serialises each flush channel's start/poll sequence.
	flushMu [numFlushChannels]sync.Mutex
}

// FlushPollTries bounds the busy-wait on a DDR flush register.
const FlushPollTries = 100000

// Errors from SoC operations.
var (
	ErrNoChannel  = errors.New("ar71xx: SoC has no such DDR flush channel")
	ErrFlushStuck = errors.New("ar71xx: DDR write-buffer flush did not complete")
	ErrUnit       = errors.New("ar71xx: no such Ethernet unit")
)

// New returns the SoC described by info over r.
func New(info *Info, r Regions) (*SoC, error) {
	if info == nil {
		return nil, errors.New("ar71xx: nil Info")
	}
	if r.DDR == nil || r.PLL == nil || r.Reset == nil || r.GMAC == nil {
		return nil, errors.New("ar71xx: all of DDR, PLL, Reset and GMAC regions are required")
	}
	return &SoC{Info: info, r: r, Delay: time.Sleep}, nil
}

// Probe reads REV_ID and returns the identified SoC.
func Probe(r Regions) (*SoC, error) {
	if r.Reset == nil {
		return nil, errors.New("ar71xx: Probe needs the reset region")
	}
	info, err := Identify(r.Reset.Read32(RstRevID))
	if err != nil {
		return nil, err
	}
	return New(info, r)
}

// DeviceStop holds the blocks in mask in reset (FreeBSD
// ar71xx_chip_device_stop: OR the mask into RESET_MODULE).
func (s *SoC) DeviceStop(mask uint32) {
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	barrier.SetBits32(s.r.Reset, s.Info.ResetModule, 0, mask)
	s.r.Reset.Barrier()
	s.r.Reset.Read32(s.Info.ResetModule) // read back: the write reached the block
}

// DeviceStart releases the blocks in mask from reset.
func (s *SoC) DeviceStart(mask uint32) {
	s.resetMu.Lock()
	defer s.resetMu.Unlock()
	barrier.SetBits32(s.r.Reset, s.Info.ResetModule, mask, 0)
	s.r.Reset.Barrier()
	s.r.Reset.Read32(s.Info.ResetModule)
}

// DeviceStopped reports whether every block in mask is held in reset.
func (s *SoC) DeviceStopped(mask uint32) bool {
	s.r.Reset.Barrier()
	return s.r.Reset.Read32(s.Info.ResetModule)&mask == mask
}

// ResetMAC pulses Ethernet unit's MAC reset (and its MDIO reset where the
// SoC has one), holding it for 100 µs (FreeBSD arge_reset_mac).
func (s *SoC) ResetMAC(unit int) error {
	if unit < 0 || unit > 1 {
		return fmt.Errorf("%w: %d", ErrUnit, unit)
	}
	mask := s.Info.ResetMAC[unit] | s.Info.ResetMDIO[unit]
	s.DeviceStop(mask)
	s.Delay(100 * time.Microsecond)
	s.DeviceStart(mask)
	s.Delay(100 * time.Microsecond)
	return nil
}

// FlushDDR drains the DDR controller's write buffer for channel c, so
// that memory the device on that channel wrote is what the CPU reads
// next. Sequence (FreeBSD ar71xx_ddr_flush, Linux ath79_ddr_wb_flush):
// write 1, wait for bit 0 to clear, and do it all twice — both sources
// insist the flush "must be run twice".
func (s *SoC) FlushDDR(c FlushChannel) error {
	if !s.Info.HasFlush(c) {
		return fmt.Errorf("%w: %s on %s", ErrNoChannel, c, s.Info.Name)
	}
	off := s.Info.DDRFlush[c]
	s.flushMu[c].Lock()
	defer s.flushMu[c].Unlock()
	for pass := 0; pass < 2; pass++ {
		s.r.DDR.Barrier()
		s.r.DDR.Write32(off, ddrFlushBusy)
		if _, ok := barrier.Poll32(s.r.DDR, off, ddrFlushBusy, 0, FlushPollTries); !ok {
			return fmt.Errorf("%w: %s channel %s", ErrFlushStuck, s.Info.Name, c)
		}
	}
	return nil
}

// Flusher drains one DDR write-buffer channel. Drivers take one from the
// board and call it before reading descriptors or data the device wrote;
// it is nil-safe (a nil *ChannelFlusher flushes nothing) so boards for
// SoCs without the channel pass nil.
type ChannelFlusher struct {
	soc *SoC
	ch  FlushChannel
}

// Flusher returns the flusher for c, or an error if the SoC has no such
// channel.
func (s *SoC) Flusher(c FlushChannel) (*ChannelFlusher, error) {
	if !s.Info.HasFlush(c) {
		return nil, fmt.Errorf("%w: %s on %s", ErrNoChannel, c, s.Info.Name)
	}
	return &ChannelFlusher{soc: s, ch: c}, nil
}

// Flush drains the channel.
func (f *ChannelFlusher) Flush() error {
	if f == nil {
		return nil
	}
	return f.soc.FlushDDR(f.ch)
}

// GEFlushChannel returns the flush channel of Ethernet unit 0 or 1.
func GEFlushChannel(unit int) (FlushChannel, error) {
	switch unit {
	case 0:
		return FlushGE0, nil
	case 1:
		return FlushGE1, nil
	}
	return 0, fmt.Errorf("%w: %d", ErrUnit, unit)
}

// FlushForIRQ drains the flush channel that must precede handling CPU
// interrupt line cpuLine on this SoC (none for most lines). The CPU-level
// interrupt glue calls it before running the line's handler.
func (s *SoC) FlushForIRQ(cpuLine int) error {
	if cpuLine < 0 || cpuLine >= len(s.Info.IRQFlush) {
		return fmt.Errorf("ar71xx: CPU interrupt line %d out of range", cpuLine)
	}
	c := s.Info.IRQFlush[cpuLine]
	if c == noFlush {
		return nil
	}
	return s.FlushDDR(c)
}

// SetEthSpeed programs Ethernet unit's clock and, on SoCs with the
// AR71xx MII control registers, the MII speed field, for link speed sp
// (FreeBSD arge_set_pll → ar71xx_chip_set_pll_ge / set_mii_speed).
func (s *SoC) SetEthSpeed(unit int, sp Speed) error {
	if unit < 0 || unit > 1 {
		return fmt.Errorf("%w: %d", ErrUnit, unit)
	}
	val, err := s.Info.EthPLLValue(sp)
	if err != nil {
		return err
	}
	s.pllMu.Lock()
	defer s.pllMu.Unlock()
	switch s.Info.PLL {
	case PLLNone:
	case PLLConfigDance:
		cfg, clk, shift := uint32(PLLSecConfig71xx), uint32(PLLEthInt0Clk71xx), uint32(PLLEth0Shift71xx)
		if s.Info.Family == AR913x {
			cfg, clk, shift = PLLEthConfig913x, PLLEthInt0Clk913x, PLLEth0Shift913x
		}
		if unit == 1 {
			clk += 4
			shift += 2
		}
		s.pllDance(cfg, clk, shift, val)
	case PLLXMII:
		if unit != 0 {
			// Only GE0 has an external xMII clock; GE1 is the switch port.
			break
		}
		off := uint32(PLLEthXMII934x)
		if s.Info.Family == QCA955x {
			off = PLLEthXMII955x
		}
		s.r.PLL.Write32(off, val)
		s.r.PLL.Barrier()
	}
	if s.Info.MIICtrl {
		var f uint32
		switch sp {
		case Speed10:
			f = MIICtrlSpeed10
		case Speed100:
			f = MIICtrlSpeed100
		case Speed1000:
			f = MIICtrlSpeed1000
		}
		off := uint32(MII0Ctrl)
		if unit == 1 {
			off = MII1Ctrl
		}
		barrier.SetBits32(s.r.GMAC, off, MIICtrlSpeedMask, f<<MIICtrlSpeedShift)
		s.r.GMAC.Barrier()
	}
	return nil
}

// pllDance is FreeBSD's ar71xx_write_pll sequence: the unit's 2-bit field
// in cfg goes 2 (hold), value written, 3 (update), 0 (run).
func (s *SoC) pllDance(cfg, clk, shift, val uint32) {
	p := s.r.PLL
	barrier.SetBits32(p, cfg, 3<<shift, 2<<shift)
	p.Barrier()
	s.Delay(100 * time.Microsecond)
	p.Write32(clk, val)
	p.Barrier()
	barrier.SetBits32(p, cfg, 3<<shift, 3<<shift)
	p.Barrier()
	s.Delay(100 * time.Microsecond)
	barrier.SetBits32(p, cfg, 3<<shift, 0)
	p.Barrier()
	s.Delay(100 * time.Microsecond)
}

// GE0Interface is how GE0 is wired to its PHY on AR934x/QCA955x.
type GE0Interface uint8

const (
	GE0RGMII GE0Interface = iota + 1
	GE0MII
	GE0GMII
	GE0RMII
)

// SetGE0Interface selects GE0's PHY interface in ETH_CFG (AR934x:
// RGMII bit 0, MII bit 1, GMII bit 2, RMII bit 10; QCA955x: RGMII_EN bit
// 0 only — FreeBSD ar934xreg.h / qca955xreg.h). Other bits (switch-only
// mode, PHY swap, APB access) are preserved. SoCs without ETH_CFG return
// an error.
func (s *SoC) SetGE0Interface(m GE0Interface) error {
	all := uint32(EthCfgRGMIIGMAC0 | EthCfgMIIGMAC0 | EthCfgGMIIGMAC0 | EthCfgRMIIGMAC0)
	var bit uint32
	switch s.Info.Family {
	case AR934x:
		switch m {
		case GE0RGMII:
			bit = EthCfgRGMIIGMAC0
		case GE0MII:
			bit = EthCfgMIIGMAC0
		case GE0GMII:
			bit = EthCfgGMIIGMAC0
		case GE0RMII:
			bit = EthCfgRMIIGMAC0
		default:
			return fmt.Errorf("ar71xx: bad GE0 interface %d", m)
		}
	case QCA955x:
		all = EthCfgRGMIIGMAC0
		if m == GE0RGMII {
			bit = EthCfgRGMIIGMAC0
		} else if m != GE0GMII && m != GE0MII {
			return fmt.Errorf("ar71xx: %s: GE0 interface %d not supported", s.Info.Name, m)
		}
	default:
		return fmt.Errorf("ar71xx: %s has no ETH_CFG register", s.Info.Name)
	}
	s.pllMu.Lock()
	defer s.pllMu.Unlock()
	barrier.SetBits32(s.r.GMAC, EthCfg, all, bit)
	s.r.GMAC.Barrier()
	return nil
}

// FlushingHandler returns h preceded by the DDR flush this SoC needs before
// a handler on CPU interrupt line cpuLine may look at what its device
// wrote (IP2 PCI/PCIe/WMAC and IP3 USB on the SoCs that need it; none on
// QCA955x). Lines that need no flush get h itself. A failed flush is
// passed to onErr (if set) and the handler still runs: skipping it would
// lose the interrupt.
func (s *SoC) FlushingHandler(cpuLine int, h func(), onErr func(error)) (func(), error) {
	if cpuLine < 0 || cpuLine >= len(s.Info.IRQFlush) {
		return nil, fmt.Errorf("ar71xx: CPU interrupt line %d out of range", cpuLine)
	}
	if s.Info.IRQFlush[cpuLine] == noFlush {
		return h, nil
	}
	return func() {
		if err := s.FlushForIRQ(cpuLine); err != nil && onErr != nil {
			onErr(err)
		}
		h()
	}, nil
}
