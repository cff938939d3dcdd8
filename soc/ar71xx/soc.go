package ar71xx

import (
	"errors"
	"fmt"
)

// Family is a group of SoCs that share register layouts and quirks.
type Family uint8

const (
	AR71xx Family = iota + 1
	AR724x
	AR913x
	AR933x
	AR934x
	QCA955x
)

func (f Family) String() string {
	switch f {
	case AR71xx:
		return "AR71xx"
	case AR724x:
		return "AR724x"
	case AR913x:
		return "AR913x"
	case AR933x:
		return "AR933x"
	case AR934x:
		return "AR934x"
	case QCA955x:
		return "QCA955x"
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// AckMethod is how the MISC interrupt controller is acknowledged.
type AckMethod uint8

const (
	// AckNone: the status bit follows the source; the line is only
	// masked while its handler runs (AR71xx, AR913x: Linux
	// irq_mask_ack = mask, OpenWrt ar71xx irq.c).
	AckNone AckMethod = iota + 1
	// AckClearBit: status bits latch and are cleared by writing 0 to
	// them; the ack reads STATUS, writes it back with only this line's
	// bit cleared, then reads STATUS again so the write has reached the
	// controller before the line is unmasked (AR724x, AR933x, AR934x,
	// QCA955x: Linux ar724x_misc_irq_ack, OpenWrt, FreeBSD apb.c before
	// commit d8832271's successor). See MiscController.Ack for why the
	// later FreeBSD "write 1<<irq" form is not used.
	AckClearBit
)

// PLLMethod is how an Ethernet unit's clock is set for a link speed.
type PLLMethod uint8

const (
	// PLLNone: the MAC clock is fixed by hardware or the built-in
	// switch; nothing to program (AR724x, AR933x: FreeBSD's
	// ar724x_chip_set_pll_ge / ar933x_chip_set_pll_ge are empty).
	PLLNone PLLMethod = iota + 1
	// PLLConfigDance: set the unit's 2-bit field in a config register to
	// 2, write the INTx_CLK value, set the field to 3, clear it
	// (AR71xx SEC_CONFIG, AR913x ETH_CONFIG; FreeBSD ar71xx_write_pll).
	PLLConfigDance
	// PLLXMII: write the value to ETH_XMII_CONTROL (AR934x, QCA955x).
	PLLXMII
)

// UARTKind is the console UART type at PhysUART.
type UARTKind uint8

const (
	UART16550 UARTKind = iota + 1 // 16550 registers on a 4-byte stride
	UART933x                      // the AR933x's own UART (ar933x_uart.h)
)

// Speed is an Ethernet link speed in Mbit/s.
type Speed int

const (
	Speed10   Speed = 10
	Speed100  Speed = 100
	Speed1000 Speed = 1000
)

func (s Speed) index() (int, bool) {
	switch s {
	case Speed10:
		return 0, true
	case Speed100:
		return 1, true
	case Speed1000:
		return 2, true
	}
	return 0, false
}

// Info is the static description of one SoC variant. It is selected by
// Identify and must not be modified.
type Info struct {
	Name   string // "AR7161", "AR9344", ...
	Family Family
	Rev    uint32 // the REV_ID value it was identified from

	// ResetModule is the RESET_MODULE offset in the reset block.
	ResetModule uint32
	// ResetMAC and ResetMDIO are the reset-module bits of GE0/GE1's
	// MAC and, where it has its own bit, its MDIO block. FreeBSD's arge
	// pulses the MDIO bit together with the MAC's on AR934x/QCA955x.
	ResetMAC  [2]uint32
	ResetMDIO [2]uint32

	// DDRFlush holds each flush channel's register offset in the DDR
	// block, 0 where the SoC has no such channel.
	DDRFlush [numFlushChannels]uint32
	// IRQFlush maps CPU interrupt lines to the flush channel that must
	// be drained before that line's handler looks at memory the device
	// wrote (Linux irq.c irq_wb_chan; FreeBSD ar71xx_chip_ddr_flush_ip2).
	// -1: no flush at CPU level (demuxed sources flush per source, or
	// the SoC needs none).
	IRQFlush [6]FlushChannel

	MiscAck AckMethod

	// MDIODivisors is the MII_CFG clock-select index → MDC divisor table
	// (FreeBSD if_arge.c / Linux ag71xx.c tables); MDIOSelectMask masks
	// the index field (3 bits on AR71xx/AR913x, 4 after).
	MDIODivisors   []uint32
	MDIOSelectMask uint32
	// MDIODefaultIndex is FreeBSD's choice when no bus frequency is
	// configured (÷58 on AR934x/QCA955x, ÷28 elsewhere).
	MDIODefaultIndex int

	PLL PLLMethod
	// EthPLL are the clock values for 10, 100, 1000 Mbit/s.
	EthPLL [3]uint32
	// MIICtrl: the SoC has AR71xx-style MII0/1_CTRL speed fields.
	MIICtrl bool

	// TXAlign4 / RXAlign4: DMA buffers must start 4-byte aligned
	// (FreeBSD if_arge.c ARGE_HW_FLG_{TX,RX}_DESC_ALIGN_4BYTE): AR71xx
	// and AR913x. AR724x: see the conflict noted at its template.
	TXAlign4 bool
	RXAlign4 bool
	// DescLenMask bounds the length field of a descriptor (Linux: 4 KiB-1
	// up to AR933x, 16 KiB-1 from AR934x).
	DescLenMask uint32
	// FIFOCfg1..3 are the MAC FIFO settings (see arge).
	FIFOCfg1, FIFOCfg2, FIFOCfg3 uint32

	UART UARTKind
	// GPIOFunc is the GPIO function register offset.
	GPIOFunc uint32
}

// NeedsAck reports whether the MISC controller must be acked.
func (i *Info) NeedsAck() bool { return i.MiscAck != AckNone }

// HasFlush reports whether the SoC has flush channel c.
func (i *Info) HasFlush(c FlushChannel) bool {
	return c >= 0 && c < numFlushChannels && i.DDRFlush[c] != 0
}

// MDIODivisor returns the divisor at index idx of the MDIO clock table.
func (i *Info) MDIODivisor(idx int) (uint32, bool) {
	if idx < 0 || idx >= len(i.MDIODivisors) {
		return 0, false
	}
	return i.MDIODivisors[idx], true
}

// MDIOClockIndex picks the MII_CFG clock-select index for a reference
// clock of refHz: the first table entry whose divisor brings MDC to at
// most maxHz (Linux ag71xx_mdio_get_divider walks the same way). maxHz 0
// selects the SoC's default index (FreeBSD arge_fetch_mdiobus_clock_rate).
func (i *Info) MDIOClockIndex(refHz, maxHz uint32) (int, error) {
	if maxHz == 0 {
		return i.MDIODefaultIndex, nil
	}
	if refHz == 0 {
		return 0, errors.New("ar71xx: MDIO reference clock is 0 Hz")
	}
	for idx, div := range i.MDIODivisors {
		if refHz/div <= maxHz {
			return idx, nil
		}
	}
	return 0, fmt.Errorf("ar71xx: %s: no MDIO divisor brings %d Hz to ≤ %d Hz", i.Name, refHz, maxHz)
}

// EthPLLValue returns the PLL value for speed.
func (i *Info) EthPLLValue(s Speed) (uint32, error) {
	k, ok := s.index()
	if !ok {
		return 0, fmt.Errorf("ar71xx: unsupported link speed %d", s)
	}
	return i.EthPLL[k], nil
}

// MDIO divisor tables (FreeBSD if_arge.c / Linux ag71xx.c; the two agree).
var (
	mdioDiv71xx = []uint32{4, 4, 6, 8, 10, 14, 20, 28}
	mdioDiv724x = []uint32{2, 2, 4, 6, 8, 12, 18, 26, 32, 40, 48, 56, 62, 70, 78, 96}
	mdioDiv933x = []uint32{4, 4, 6, 8, 10, 14, 20, 28, 34, 42, 50, 58, 66, 74, 82, 98}
)

const noFlush FlushChannel = -1

// flush7CWMAC is the AR913x/AR933x layout: GE0 0x7C, GE1 0x80, USB 0x84
// and WMAC at 0x88, where AR724x has PCIe (FreeBSD ar91xxreg.h,
// ar933xreg.h AR9xXX_DDR_REG_FLUSH_*). Channels are named by function.
var flush7CWMAC = [numFlushChannels]uint32{
	FlushGE0: DDRFlushBase7C, FlushGE1: DDRFlushBase7C + 4, FlushUSB: DDRFlushBase7C + 8, FlushWMAC: DDRFlushBase7C + 12,
}

func flushTable(base uint32, chans ...FlushChannel) (t [numFlushChannels]uint32) {
	for _, c := range chans {
		t[c] = base + 4*uint32(c)
	}
	return t
}

// Family templates; Identify copies one and fills Name and Rev.
var families = map[Family]Info{
	AR71xx: {
		Family:      AR71xx,
		ResetModule: RstModuleAR71xx,
		ResetMAC:    [2]uint32{ResetGE0MAC, ResetGE1MAC},
		DDRFlush:    flushTable(DDRFlushBase9C, FlushGE0, FlushGE1, FlushUSB, FlushPCI),
		// Linux irq.c: IP2 (PCI) → channel 3, IP3 (USB) → channel 2.
		IRQFlush:         [6]FlushChannel{FlushPCI, FlushUSB, noFlush, noFlush, noFlush, noFlush},
		MiscAck:          AckNone,
		MDIODivisors:     mdioDiv71xx,
		MDIOSelectMask:   0x7,
		MDIODefaultIndex: 7,
		PLL:              PLLConfigDance,
		EthPLL:           [3]uint32{0x00991099, 0x00001099, 0x00110000}, // FreeBSD ar71xxreg.h
		MIICtrl:          true,
		TXAlign4:         true,
		RXAlign4:         true,
		DescLenMask:      0xFFF,
		FIFOCfg1:         0x0FFF0000,
		FIFOCfg2:         0x00001FFF,
		// FIFO_CFG3: the sources conflict (FreeBSD 0x008001FF for
		// AR71xx and 0x00780FFF for AR913x; Linux the opposite). We
		// follow FreeBSD, the driver whose other AR71xx choices we
		// follow too; TestFIFOCfg3Choice pins it.
		FIFOCfg3: 0x008001FF,
		UART:     UART16550,
		GPIOFunc: GPIOFunc71xx,
	},
	AR913x: {
		Family:      AR913x,
		ResetModule: RstModuleOther,
		ResetMAC:    [2]uint32{ResetGE0MAC, ResetGE1MAC},
		DDRFlush:    flush7CWMAC,
		// Linux irq.c: IP2 (WMAC) → WMAC channel, IP3 (USB) → USB.
		IRQFlush:         [6]FlushChannel{FlushWMAC, FlushUSB, noFlush, noFlush, noFlush, noFlush},
		MiscAck:          AckNone,
		MDIODivisors:     mdioDiv71xx,
		MDIOSelectMask:   0x7,
		MDIODefaultIndex: 7,
		PLL:              PLLConfigDance,
		EthPLL:           [3]uint32{0x00441099, 0x13000A44, 0x1A000000}, // FreeBSD ar91xxreg.h
		MIICtrl:          true,
		TXAlign4:         true,
		RXAlign4:         true,
		DescLenMask:      0xFFF,
		FIFOCfg1:         0x0FFF0000,
		FIFOCfg2:         0x00001FFF,
		FIFOCfg3:         0x00780FFF, // FreeBSD; see the AR71xx comment
		UART:             UART16550,
		GPIOFunc:         GPIOFunc71xx,
	},
	AR724x: {
		Family:      AR724x,
		ResetModule: RstModuleOther,
		ResetMAC:    [2]uint32{ResetGE0MAC, ResetGE1MAC},
		ResetMDIO:   [2]uint32{ResetGE0MDIO, ResetGE1MDIO},
		DDRFlush:    flushTable(DDRFlushBase7C, FlushGE0, FlushGE1, FlushUSB, FlushPCI),
		IRQFlush:    [6]FlushChannel{FlushPCI, FlushUSB, noFlush, noFlush, noFlush, noFlush},
		MiscAck:     AckClearBit,
		// FreeBSD quotes OpenWrt: the AR7240 wants ÷6 (index 3).
		MDIODivisors:     mdioDiv724x,
		MDIOSelectMask:   0xF,
		MDIODefaultIndex: 7,
		PLL:              PLLNone,
		EthPLL:           [3]uint32{0x00991099, 0x00001099, 0x00110000}, // FreeBSD ar724xreg.h (AR7242 GE0 only)
		// DMA alignment: the sources conflict. FreeBSD leaves AR724x out
		// of its 1-byte list (so 4-byte rules apply); Linux gives it the
		// 2-byte RX IP-align offset, i.e. byte-aligned DMA, and the
		// project design (AR7161 needs 4-byte TX buffers, "AR7240+ does
		// not") follows Linux. We do too: TXAlign4/RXAlign4 false.
		// TestAR724xAlignmentChoice pins it.
		DescLenMask: 0xFFF,
		FIFOCfg1:    0x0010FFFF,
		FIFOCfg2:    0x015500AA,
		FIFOCfg3:    0x01F00140,
		UART:        UART16550,
		GPIOFunc:    GPIOFunc71xx,
	},
	AR933x: {
		Family:           AR933x,
		ResetModule:      RstModuleOther,
		ResetMAC:         [2]uint32{ResetGE0MAC, ResetGE1MAC},
		ResetMDIO:        [2]uint32{ResetGE0MDIO, ResetGE1MDIO},
		DDRFlush:         flush7CWMAC,
		IRQFlush:         [6]FlushChannel{FlushWMAC, FlushUSB, noFlush, noFlush, noFlush, noFlush},
		MiscAck:          AckClearBit,
		MDIODivisors:     mdioDiv933x,
		MDIOSelectMask:   0xF,
		MDIODefaultIndex: 7,
		PLL:              PLLNone,
		EthPLL:           [3]uint32{0x00991099, 0x00001099, 0x00110000},
		DescLenMask:      0xFFF,
		FIFOCfg1:         0x0010FFFF,
		FIFOCfg2:         0x015500AA,
		FIFOCfg3:         0x01F00140,
		UART:             UART933x,
		GPIOFunc:         GPIOFunc71xx,
	},
	AR934x: {
		Family:      AR934x,
		ResetModule: RstModuleOther,
		ResetMAC:    [2]uint32{ResetGE0MAC, ResetGE1MAC},
		ResetMDIO:   [2]uint32{ResetGE0MDIO, ResetGE1MDIO},
		DDRFlush:    flushTable(DDRFlushBase9C, FlushGE0, FlushGE1, FlushUSB, FlushPCI, FlushWMAC),
		// Only IP3 (USB) is flushed at CPU level; the IP2 demux flushes
		// PCIe or WMAC per source (Linux irq.c ar934x_ip2_irq_dispatch).
		IRQFlush:         [6]FlushChannel{noFlush, FlushUSB, noFlush, noFlush, noFlush, noFlush},
		MiscAck:          AckClearBit,
		MDIODivisors:     mdioDiv933x,
		MDIOSelectMask:   0xF,
		MDIODefaultIndex: 11,
		PLL:              PLLXMII,
		EthPLL:           [3]uint32{0x00001616, 0x00000101, 0x16000000}, // FreeBSD ar934xreg.h ("verify")
		DescLenMask:      0x3FFF,
		FIFOCfg1:         0x0010FFFF,
		FIFOCfg2:         0x015500AA,
		FIFOCfg3:         0x01F00140,
		UART:             UART16550,
		GPIOFunc:         GPIOFunc934x,
	},
	QCA955x: {
		Family:      QCA955x,
		ResetModule: RstModuleOther,
		ResetMAC:    [2]uint32{ResetGE0MAC, ResetGE1MAC},
		ResetMDIO:   [2]uint32{ResetGE0MDIO, ResetGE1MDIO},
		DDRFlush:    flushTable(DDRFlushBase9C, FlushGE0, FlushGE1, FlushUSB, FlushPCI, FlushWMAC),
		// Linux/OpenWrt do no CPU-level flush on QCA955x ("TODO: flush
		// DDR?"); the GE channels are still flushed by arge (FreeBSD).
		IRQFlush:         [6]FlushChannel{noFlush, noFlush, noFlush, noFlush, noFlush, noFlush},
		MiscAck:          AckClearBit,
		MDIODivisors:     mdioDiv933x,
		MDIOSelectMask:   0xF,
		MDIODefaultIndex: 11,
		PLL:              PLLXMII,
		EthPLL:           [3]uint32{0x00001616, 0x00000101, 0x16000000}, // FreeBSD qca955xreg.h ("verify")
		DescLenMask:      0x3FFF,
		FIFOCfg1:         0x0010FFFF,
		FIFOCfg2:         0x015500AA,
		FIFOCfg3:         0x01F00140,
		UART:             UART16550,
		GPIOFunc:         GPIOFunc934x,
	},
}

var chips = []struct {
	major  uint32
	family Family
	name   string
}{
	{RevMajor913x, AR913x, "AR913x"},
	{RevMajor7240, AR724x, "AR7240"},
	{RevMajor7241, AR724x, "AR7241"},
	{RevMajor7242, AR724x, "AR7242"},
	{RevMajor9330, AR933x, "AR9330"},
	{RevMajor9331, AR933x, "AR9331"},
	{RevMajor9341, AR934x, "AR9341"},
	{RevMajor9342, AR934x, "AR9342"},
	{RevMajor9344, AR934x, "AR9344"},
	{RevMajor9556, QCA955x, "QCA9556"},
	{RevMajor9558, QCA955x, "QCA9558"},
}

// ErrUnknownChip is returned by Identify for a REV_ID it does not know.
var ErrUnknownChip = errors.New("ar71xx: unknown REV_ID")

// Identify returns the Info for the chip whose REV_ID register (reset block
// offset 0x90) reads rev.
func Identify(rev uint32) (*Info, error) {
	major := rev & RevMajorMask
	var fam Family
	var name string
	if major == RevMajor71xx {
		fam = AR71xx
		switch rev & RevMinorMask {
		case 0:
			name = "AR7130"
		case 1:
			name = "AR7141"
		case 2:
			name = "AR7161"
		default:
			return nil, fmt.Errorf("%w: %#x (AR71xx minor 3)", ErrUnknownChip, rev)
		}
	} else {
		for _, c := range chips {
			if c.major == major {
				fam, name = c.family, c.name
				break
			}
		}
		if fam == 0 {
			return nil, fmt.Errorf("%w: %#x", ErrUnknownChip, rev)
		}
	}
	info := families[fam]
	info.Name = name
	info.Rev = rev
	return &info, nil
}
