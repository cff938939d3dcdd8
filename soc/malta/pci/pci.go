// Package pci is PCI for QEMU's (and the real) MIPS Malta: configuration
// access through the GT-64120 host bridge on either CPU byte order (gt.go),
// enumeration of bus 0, BAR sizing and assignment into the GT's I/O and
// memory windows, the command register, and the PIIX4 PIRQ routing that
// gives each slot its i8259 line.
//
// QEMU assigns no BARs and leaves every command register at 0 (neither reset
// nor QEMU 7.2's -kernel stub in hw/mips/malta.c does it; the monitor's info
// pci shows them unassigned), so firmware must do it; Assign does, the way
// YAMON and U-Boot lay it out: I/O from 0x2000 and memory from 0x10000000
// (PCI address == CPU physical address on malta; the I/O window maps port N
// at physical 0x18000000+N).
//
// Facts: PCI Local Bus Specification 2.2 (configuration header, BAR
// encoding), Intel PIIX4 datasheet (PIRQRC registers 0x60-0x63), QEMU
// hw/isa/piix4.c (PIRQ reset values, pci_slot_get_pirq) and Linux
// arch/mips/pci/fixup-malta.c (the same slot table) and
// arch/mips/mti-malta/malta-pci.c (I/O resources from 0x2000).
package pci

import (
	"errors"
	"fmt"
	"strings"
)

// Addr is a bus/device/function triple.
type Addr struct{ Bus, Dev, Fn uint8 }

func (a Addr) String() string { return fmt.Sprintf("%02x:%02x.%d", a.Bus, a.Dev, a.Fn) }

// Config is configuration-space access: whole dwords at dword-aligned
// registers (the GT only implements 32-bit accesses; narrower writes are
// read-modify-write, see Write8/Write16).
type Config interface {
	Read32(a Addr, reg uint8) uint32
	Write32(a Addr, reg uint8, v uint32)
}

// Configuration header registers and bits (PCI 2.2 §6.1, §6.2.2, §6.2.5).
const (
	RegID       = 0x00 // vendor (low 16), device (high 16)
	RegCommand  = 0x04 // command (low 16), status (high 16)
	RegClassRev = 0x08 // revision (low 8), class code (high 24)
	RegHeader   = 0x0c // header type in bits 23:16
	RegBAR0     = 0x10
	RegIntr     = 0x3c // interrupt line (low 8), pin (bits 15:8)

	CmdIO     = 0x0001
	CmdMemory = 0x0002
	CmdMaster = 0x0004

	barIO       = 0x1
	barMemType  = 0x6
	barMem64    = 0x4
	barPrefetch = 0x8
	hdrMulti    = 0x80
	hdrTypeMask = 0x7f
)

// Malta/PIIX4 facts (QEMU hw/isa/piix4.c; Linux
// arch/mips/mti-malta/malta-pci.c; U-Boot board/imgtec/malta/malta.c uses
// the same memory window).
const (
	// SlotPIIX4 is the PIIX4's device number; its function 0 holds the
	// PIRQ route registers.
	SlotPIIX4 = 10
	regPIRQ   = 0x60 // PIRQA..D route: ISA IRQ in bits 3:0, bit 7 disables
	pirqOff   = 0x80
	// maxDev: device 31 is skipped because of a Galileo erratum (Linux
	// ops-gt64xxx_pci0.c).
	maxDev = 31

	// Windows BARs are assigned from (after QEMU's -kernel stub).
	IOBase, IOLimit   = 0x2000, 0x200000       // I/O window is 2 MiB
	MemBase, MemLimit = 0x10000000, 0x18000000 // M0 window, 128 MiB
)

// BARKind is what a BAR decodes.
type BARKind uint8

const (
	BARNone BARKind = iota
	BARIO
	BARMem32
	BARMem64
)

func (k BARKind) String() string {
	return [...]string{"none", "io", "mem", "mem64"}[k]
}

// BAR is one base address register after sizing (and assignment).
type BAR struct {
	Kind     BARKind
	Prefetch bool
	Size     uint64
	Addr     uint64 // assigned address; for I/O, the port number
}

// Device is one function found on the bus.
type Device struct {
	Addr
	Vendor, Device uint16
	Class          uint32 // base class, subclass, prog-if
	Rev            uint8
	Header         uint8
	Pin            uint8 // 0 none, 1 INTA .. 4 INTD
	IRQ            int   // i8259 line, -1 if none
	BAR            [6]BAR
}

func (d *Device) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %04x:%04x class %06x rev %02x", d.Addr, d.Vendor, d.Device, d.Class, d.Rev)
	if d.IRQ >= 0 {
		fmt.Fprintf(&b, " irq %d", d.IRQ)
	}
	for i, r := range d.BAR {
		if r.Kind != BARNone {
			fmt.Fprintf(&b, " bar%d %v %#x/%#x", i, r.Kind, r.Addr, r.Size)
		}
	}
	return b.String()
}

// Errors.
var (
	ErrBAR   = errors.New("pci: bad BAR")
	ErrSpace = errors.New("pci: address window exhausted")
)

// Scan enumerates bus 0: every present function of devices 0..30, with its
// BARs sized (decoding is switched off while a BAR reads as all ones, then
// restored) and its IRQ from the PIIX4 routing. A bad BAR (a 64-bit BAR in
// the last slot, a size that is not a power of two) is an error for that
// device, which is then left out.
func Scan(c Config) ([]*Device, []error) {
	var devs []*Device
	var errs []error
	for dev := uint8(0); dev < maxDev; dev++ {
		for fn := uint8(0); fn < 8; fn++ {
			a := Addr{0, dev, fn}
			id := c.Read32(a, RegID)
			if id == 0xffffffff || id == 0 || uint16(id) == 0xffff {
				if fn == 0 {
					break
				}
				continue
			}
			d, err := probe(c, a, id)
			if err != nil {
				errs = append(errs, err)
			} else {
				devs = append(devs, d)
			}
			if fn == 0 && d != nil && d.Header&hdrMulti == 0 {
				break
			}
		}
	}
	for _, d := range devs {
		d.IRQ = routeIRQ(c, d.Dev, d.Pin)
	}
	return devs, errs
}

func probe(c Config, a Addr, id uint32) (*Device, error) {
	d := &Device{Addr: a, Vendor: uint16(id), Device: uint16(id >> 16), IRQ: -1}
	cr := c.Read32(a, RegClassRev)
	d.Class, d.Rev = cr>>8, uint8(cr)
	d.Header = uint8(c.Read32(a, RegHeader) >> 16)
	d.Pin = uint8(c.Read32(a, RegIntr) >> 8)
	if d.Pin > 4 {
		return nil, fmt.Errorf("pci %v: interrupt pin %d", a, d.Pin)
	}
	nbar := 6
	switch d.Header & hdrTypeMask {
	case 0:
	case 1:
		nbar = 2 // PCI-to-PCI bridge; buses behind it are not scanned
	default:
		nbar = 0
	}
	if a.Dev == 0 && a.Bus == 0 {
		nbar = 0 // the GT's own BARs map its SDRAM/register windows: leave them
	}
	cmd := c.Read32(a, RegCommand)
	c.Write32(a, RegCommand, cmd&^(CmdIO|CmdMemory)&0xffff)
	defer c.Write32(a, RegCommand, cmd&0xffff)
	for i := 0; i < nbar; i++ {
		reg := uint8(RegBAR0 + 4*i)
		old := c.Read32(a, reg)
		c.Write32(a, reg, 0xffffffff)
		v := c.Read32(a, reg)
		c.Write32(a, reg, old)
		if v == 0 || v == 0xffffffff {
			continue // unimplemented
		}
		b := &d.BAR[i]
		if v&barIO != 0 {
			b.Kind = BARIO
			m := v &^ 3 & 0xffff // I/O space is 64 KiB on x86-style buses
			if m == 0 {
				return nil, fmt.Errorf("%w: %v bar%d I/O mask %#x", ErrBAR, a, i, v)
			}
			b.Size = uint64(^m&0xffff) + 1
		} else {
			b.Prefetch = v&barPrefetch != 0
			m := uint64(v &^ 0xf)
			switch v & barMemType {
			case 0:
				b.Kind = BARMem32
				m |= 0xffffffff00000000
			case barMem64:
				if i == 5 {
					return nil, fmt.Errorf("%w: %v bar5 is 64-bit", ErrBAR, a)
				}
				b.Kind = BARMem64
				hreg := reg + 4
				hold := c.Read32(a, hreg)
				c.Write32(a, hreg, 0xffffffff)
				m |= uint64(c.Read32(a, hreg)) << 32
				c.Write32(a, hreg, hold)
				i++ // the upper half is part of this BAR
			default:
				return nil, fmt.Errorf("%w: %v bar%d reserved memory type %#x", ErrBAR, a, i, v)
			}
			if m == 0 {
				return nil, fmt.Errorf("%w: %v bar%d memory mask %#x", ErrBAR, a, i, v)
			}
			b.Size = ^m + 1
		}
		if b.Size&(b.Size-1) != 0 {
			return nil, fmt.Errorf("%w: %v bar%d size %#x not a power of two", ErrBAR, a, i, b.Size)
		}
	}
	return d, nil
}

// PIRQ returns which PIIX4 PIRQ line (0 = A .. 3 = D) a slot's pin drives
// on Malta (QEMU malta.c pci_slot_get_pirq; the same table Linux
// fixup-malta.c uses). pin is 1 = INTA .. 4 = INTD.
func PIRQ(slot, pin uint8) int {
	p := int(pin) - 1
	switch {
	case slot == 10:
		return 3 // PIIX4 USB: PIRQD
	case slot == 11:
		return 1 // Ethernet (pcnet): PIRQB
	case slot == 12:
		return 2 // audio: PIRQC
	case slot >= 18 && slot <= 21:
		return (int(slot) - 18 + p) & 3 // PCI slots 1-4, rotated
	}
	return p & 3
}

// routeIRQ reads the PIIX4's route for the pin's PIRQ: the i8259 line, or
// -1 if the function has no pin or the route is disabled.
func routeIRQ(c Config, slot, pin uint8) int {
	if pin == 0 || slot == 0 {
		return -1
	}
	r := uint8(c.Read32(Addr{0, SlotPIIX4, 0}, regPIRQ) >> (8 * PIRQ(slot, pin)))
	if r&pirqOff != 0 || r&0x0f < 3 || r&0x0f > 15 {
		return -1
	}
	return int(r & 0x0f)
}

// Assign gives every sized BAR an address (I/O from IOBase, memory from
// MemBase, each aligned to its size, largest first so alignment wastes
// nothing), writes the interrupt line register, and enables I/O and
// memory decoding for what was assigned. Bus mastering is left to
// drivers (SetMaster). Already-assigned windows of other devices are not
// considered: call it once, on the whole bus.
func Assign(c Config, devs []*Device) error {
	type want struct {
		d *Device
		i int
	}
	var ws []want
	for _, d := range devs {
		for i := range d.BAR {
			if d.BAR[i].Kind != BARNone {
				ws = append(ws, want{d, i})
			}
		}
	}
	// Largest first: then each allocation is naturally aligned.
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ws[j].d.BAR[ws[j].i].Size > ws[j-1].d.BAR[ws[j-1].i].Size; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
	io, mem := uint64(IOBase), uint64(MemBase)
	for _, w := range ws {
		b := &w.d.BAR[w.i]
		next, limit := &mem, uint64(MemLimit)
		if b.Kind == BARIO {
			next, limit = &io, IOLimit
		}
		a := (*next + b.Size - 1) &^ (b.Size - 1)
		if a+b.Size > limit || a+b.Size < a {
			return fmt.Errorf("%w: %v bar%d of %#x bytes", ErrSpace, w.d.Addr, w.i, b.Size)
		}
		b.Addr, *next = a, a+b.Size
		reg := uint8(RegBAR0 + 4*w.i)
		flags := c.Read32(w.d.Addr, reg) & 0xf
		if b.Kind == BARIO {
			flags &= 3
		}
		c.Write32(w.d.Addr, reg, uint32(a)|flags)
		if b.Kind == BARMem64 {
			c.Write32(w.d.Addr, reg+4, uint32(a>>32))
		}
	}
	for _, d := range devs {
		var en uint32
		for _, b := range d.BAR {
			switch b.Kind {
			case BARIO:
				en |= CmdIO
			case BARMem32, BARMem64:
				en |= CmdMemory
			}
		}
		if d.IRQ >= 0 {
			Write8(c, d.Addr, RegIntr, uint8(d.IRQ))
		}
		if en != 0 {
			SetCommand(c, d.Addr, 0, uint16(en))
		}
	}
	return nil
}

// SetCommand read-modify-writes the command register: bits in clear are
// cleared, bits in set are set. The status half of the dword is written as
// zero, since its bits are write-one-to-clear.
func SetCommand(c Config, a Addr, clear, set uint16) {
	v := c.Read32(a, RegCommand)
	c.Write32(a, RegCommand, uint32(uint16(v)&^clear|set))
}

// SetMaster enables bus mastering (DMA) for a device.
func SetMaster(c Config, a Addr) { SetCommand(c, a, 0, CmdMaster) }

// Write8 writes one byte of configuration space as a dword
// read-modify-write (the GT only does 32-bit accesses).
func Write8(c Config, a Addr, reg uint8, v uint8) {
	sh := 8 * uint32(reg&3)
	w := c.Read32(a, reg&^3)
	c.Write32(a, reg&^3, w&^(0xff<<sh)|uint32(v)<<sh)
}
