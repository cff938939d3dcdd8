package pci

import (
	"fmt"

	"github.com/gowrt/gowrt/barrier"
)

// GT-64120 register offsets (Galileo GT-64120 datasheet; the same offsets
// FreeBSD sys/mips/malta/gtreg.h and Linux asm/gt64120.h name; QEMU 7.2
// hw/mips/gt64xxx_pci.c, hw/pci-host/gt64120.c in later QEMU). GTBase is
// where QEMU's -kernel stub (hw/mips/malta.c) moves the registers, Linux's
// MIPS_GT_BASE (arch/mips/include/asm/mach-malta/mach-gt64120.h).
const (
	GTBase      = 0x1be00000 // physical, after QEMU's -kernel stub (ISD = 0xDF)
	GTSize      = 0x1000
	gtISD       = 0x068 // internal space decode: GTBase >> 21
	gtPCI0Cmd   = 0xc00 // bit 0: config data byte swapping off (MBYTESWAP)
	gtCfgAddr   = 0xcf8
	gtCfgData   = 0xcfc
	gtISDStub   = 0xdf
	cfgAddrEn   = 0x80000000
	kseg1       = 0xa0000000
	maxBusProbe = 1 // malta has one PCI bus and no bridges
)

// GT is configuration access through the GT-64120's CFGADDR/CFGDATA pair.
//
// Byte order (QEMU hw/mips/gt64xxx_pci.c, checked on QEMU 7.2 in both byte
// orders; Linux arch/mips/pci/ops-gt64xxx_pci0.c does the same): the GT's
// own registers are little-endian, so on a big-endian CPU every register
// value is byte-swapped, CFGADDR included. CFGDATA is swapped again by the
// GT's PCI byte-swapping unless PCI0_CMD bit 0 is set, except for the GT
// itself (device 0): net, on big-endian the raw 32-bit load of CFGDATA is
// the configuration dword for ordinary devices, and the swapped value for
// 00:00. On little-endian nothing is swapped.
type GT struct {
	regs barrier.Space // little-endian view: GT registers, GT's own config data
	raw  barrier.Space // native view of the same window: other devices' config data
}

// NewGT returns configuration access over the GT register window. regs and
// raw map the same 4 KiB, in little-endian and native order.
func NewGT(regs, raw barrier.Space) *GT { return &GT{regs: regs, raw: raw} }

// OpenGT maps the GT-64120 at GTBase through kseg1 (bare metal) and checks
// that its internal space decode register is where QEMU's -kernel stub (or
// YAMON) put it.
func OpenGT() (*GT, error) {
	regs, err := barrier.NewMMIO("gt64120", kseg1+GTBase, GTSize, barrier.LittleEndian)
	if err != nil {
		return nil, err
	}
	raw, err := barrier.NewMMIO("gt64120-raw", kseg1+GTBase, GTSize, barrier.Native)
	if err != nil {
		return nil, err
	}
	if isd := regs.Read32(gtISD); isd != gtISDStub {
		return nil, fmt.Errorf("pci: GT-64120 ISD reads %#x at %#x, want %#x (windows not in the YAMON layout)", isd, GTBase, gtISDStub)
	}
	return NewGT(regs, raw), nil
}

func (g *GT) data(a Addr) barrier.Space {
	if a.Bus == 0 && a.Dev == 0 {
		return g.regs
	}
	return g.raw
}

func (g *GT) setAddr(a Addr, reg uint8) {
	g.regs.Write32(gtCfgAddr, cfgAddrEn|uint32(a.Bus)<<16|uint32(a.Dev)<<11|uint32(a.Fn)<<8|uint32(reg&0xfc))
	g.regs.Barrier() // the address must reach the GT before the data access
}

// Read32 implements Config.
func (g *GT) Read32(a Addr, reg uint8) uint32 {
	g.setAddr(a, reg)
	return g.data(a).Read32(gtCfgData)
}

// Write32 implements Config.
func (g *GT) Write32(a Addr, reg uint8, v uint32) {
	g.setAddr(a, reg)
	d := g.data(a)
	d.Write32(gtCfgData, v)
	d.Barrier()
}
