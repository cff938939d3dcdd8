package pci

import (
	"errors"
	"math/bits"
	"testing"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
)

// fn is one emulated PCI function: a type-0 header with BARs that decode
// bits by mask, as PCI 2.2 §6.2.5.1 requires.
type fn struct {
	id, classRev, header uint32
	pin                  uint8
	mask                 [6]uint32 // BAR read-back after writing ones; 0: none
	bar                  [6]uint32
	cmd                  uint32
	intr                 uint32
	regs                 map[uint8]uint32
}

type bus map[Addr]*fn

func (b bus) Read32(a Addr, reg uint8) uint32 {
	f := b[a]
	if f == nil {
		return 0xffffffff
	}
	switch {
	case reg == RegID:
		return f.id
	case reg == RegCommand:
		return f.cmd
	case reg == RegClassRev:
		return f.classRev
	case reg == RegHeader:
		return f.header << 16
	case reg >= RegBAR0 && reg < RegBAR0+24:
		return f.bar[(reg-RegBAR0)/4]
	case reg == RegIntr:
		return uint32(f.pin)<<8 | f.intr&0xff
	}
	return f.regs[reg]
}

func (b bus) Write32(a Addr, reg uint8, v uint32) {
	f := b[a]
	if f == nil {
		return
	}
	switch {
	case reg == RegCommand:
		f.cmd = v & 0x7
	case reg >= RegBAR0 && reg < RegBAR0+24:
		i := (reg - RegBAR0) / 4
		m := f.mask[i]
		if i > 0 && f.mask[i-1]&7 == 4 { // upper half of a 64-bit BAR
			m = f.mask[i]
		}
		f.bar[i] = v&m | m&0xf&f.mask[i]
		if m&1 != 0 {
			f.bar[i] = v&m | 1
		}
	case reg == RegIntr:
		f.intr = v & 0xff
	default:
		if f.regs == nil {
			f.regs = map[uint8]uint32{}
		}
		f.regs[reg] = v
	}
}

// maltaBus is QEMU malta's bus 0 as QEMU 7.2 presents it (the monitor's
// info pci and BAR sizing probes) plus a 64-bit BAR device in slot 19.
func maltaBus() bus {
	return bus{
		{0, 0, 0}:  {id: 0x462011ab, classRev: 0x06000010, pin: 1},
		{0, 10, 0}: {id: 0x71108086, classRev: 0x06010000, header: 0x80, regs: map[uint8]uint32{0x60: 0x0b0b0a0a}},
		{0, 10, 1}: {id: 0x71118086, classRev: 0x01018a01, mask: [6]uint32{4: 0xfffffff1}},
		{0, 10, 2}: {id: 0x71128086, classRev: 0x0c030001, pin: 4, mask: [6]uint32{4: 0xffffffe1}},
		{0, 10, 3}: {id: 0x71138086, classRev: 0x06800003, pin: 1},
		{0, 11, 0}: {id: 0x20001022, classRev: 0x02000010, pin: 1, mask: [6]uint32{0: 0xffffffe1, 1: 0xffffffe0}},
		{0, 18, 0}: {id: 0x00b81013, classRev: 0x03000000, mask: [6]uint32{0: 0xfe000008, 1: 0xfffff000}},
		{0, 19, 0}: {id: 0x000d1b36, classRev: 0x0c033001, pin: 1, mask: [6]uint32{0: 0xffffc004, 1: 0xffffffff}},
	}
}

func TestScanAssign(t *testing.T) {
	b := maltaBus()
	devs, errs := Scan(b)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(devs) != 8 {
		t.Fatalf("found %d functions, want 8", len(devs))
	}
	if err := Assign(b, devs); err != nil {
		t.Fatal(err)
	}
	by := map[Addr]*Device{}
	for _, d := range devs {
		by[d.Addr] = d
		t.Log(d)
	}
	pc := by[Addr{0, 11, 0}]
	if pc.IRQ != 10 || pc.BAR[0].Kind != BARIO || pc.BAR[0].Size != 32 || pc.BAR[1].Kind != BARMem32 || pc.BAR[1].Size != 32 {
		t.Fatalf("pcnet: %v", pc)
	}
	if u := by[Addr{0, 10, 2}]; u.IRQ != 11 {
		t.Fatalf("UHCI irq %d, want 11 (PIRQD)", u.IRQ)
	}
	if x := by[Addr{0, 19, 0}]; x.BAR[0].Kind != BARMem64 || x.BAR[0].Size != 16<<10 || x.IRQ != 10 {
		t.Fatalf("xhci: %v", x)
	}
	if g := by[Addr{0, 0, 0}]; g.BAR != [6]BAR{} || g.IRQ != -1 {
		t.Fatalf("host bridge touched: %v", g)
	}
	// Every assigned window: aligned, inside its window, no overlaps, and
	// written to the BAR; decoding enabled.
	type span struct{ lo, hi uint64 }
	var io, mem []span
	for _, d := range devs {
		f := b[d.Addr]
		for i, r := range d.BAR {
			if r.Kind == BARNone {
				continue
			}
			if r.Addr%r.Size != 0 {
				t.Errorf("%v bar%d %#x not aligned to %#x", d.Addr, i, r.Addr, r.Size)
			}
			s := span{r.Addr, r.Addr + r.Size}
			lst, lo, hi := &mem, uint64(MemBase), uint64(MemLimit)
			want := CmdMemory
			if r.Kind == BARIO {
				lst, lo, hi, want = &io, IOBase, IOLimit, CmdIO
			}
			if s.lo < lo || s.hi > hi {
				t.Errorf("%v bar%d %#x outside window", d.Addr, i, r.Addr)
			}
			for _, o := range *lst {
				if s.lo < o.hi && o.lo < s.hi {
					t.Errorf("%v bar%d overlaps", d.Addr, i)
				}
			}
			*lst = append(*lst, s)
			if got := uint64(f.bar[i] &^ 0xf); got != r.Addr&0xffffffff {
				t.Errorf("%v bar%d register %#x, assigned %#x", d.Addr, i, f.bar[i], r.Addr)
			}
			if f.cmd&uint32(want) == 0 {
				t.Errorf("%v: command %#x lacks %#x", d.Addr, f.cmd, want)
			}
		}
		if d.IRQ >= 0 && f.intr != uint32(d.IRQ) {
			t.Errorf("%v: interrupt line %d, want %d", d.Addr, f.intr, d.IRQ)
		}
	}
	SetMaster(b, pc.Addr)
	if b[pc.Addr].cmd != 7 {
		t.Fatalf("pcnet command %#x after SetMaster", b[pc.Addr].cmd)
	}
}

func TestBadBARs(t *testing.T) {
	b := bus{
		{0, 11, 0}: {id: 0x20001022, mask: [6]uint32{0: 0xff0fffe0}},
		{0, 12, 0}: {id: 0x20001022, mask: [6]uint32{5: 0xfffff004}},
		{0, 13, 0}: {id: 0x20001022, mask: [6]uint32{0: 0xfffff006}},
		{0, 14, 0}: {id: 0x20001022, pin: 7},
		{0, 15, 0}: {id: 0x20001022, mask: [6]uint32{0: 0xffffffe1}},
	}
	devs, errs := Scan(b)
	if len(devs) != 1 || len(errs) != 4 {
		t.Fatalf("devs %v errs %v", devs, errs)
	}
	for _, e := range errs[:3] {
		if !errors.Is(e, ErrBAR) {
			t.Errorf("%v: want ErrBAR", e)
		}
	}
}

func TestWindowExhausted(t *testing.T) {
	b := bus{}
	for d := uint8(18); d < 22; d++ {
		b[Addr{0, d, 0}] = &fn{id: 0x10001000, mask: [6]uint32{0: 0xf8000000}} // 128 MiB each
	}
	devs, _ := Scan(b)
	if err := Assign(b, devs); !errors.Is(err, ErrSpace) {
		t.Fatalf("4×128 MiB in a 128 MiB window: %v", err)
	}
}

func TestPIRQTable(t *testing.T) {
	for _, tc := range []struct {
		slot, pin uint8
		want      int
	}{
		{10, 4, 3}, {10, 1, 3}, {11, 1, 1}, {12, 1, 2},
		{18, 1, 0}, {19, 1, 1}, {20, 1, 2}, {21, 1, 3}, {21, 2, 0}, {25, 2, 1},
	} {
		if got := PIRQ(tc.slot, tc.pin); got != tc.want {
			t.Errorf("slot %d pin %d: PIRQ %d, want %d", tc.slot, tc.pin, got, tc.want)
		}
	}
}

// gtModel is the GT-64120 configuration path as QEMU 7.2 implements it
// (gt64xxx_pci.c): registers byte-swapped when GT_CPU bit 12 is clear (the
// big-endian reset value), CFGDATA swapped once more when PCI0_CMD bit 0 is
// clear and the target is not device 0.
type gtModel struct {
	be   bool
	bus  bus
	addr uint32
}

func (g *gtModel) swapReg(v uint32) uint32 {
	if g.be {
		return bits.ReverseBytes32(v)
	}
	return v
}

func (g *gtModel) target() (Addr, uint8, bool) {
	if g.addr&cfgAddrEn == 0 {
		return Addr{}, 0, false
	}
	return Addr{uint8(g.addr >> 16), uint8(g.addr>>11) & 31, uint8(g.addr>>8) & 7}, uint8(g.addr), true
}

func (g *gtModel) dataSwap(v uint32) uint32 {
	v = g.swapReg(v)
	if a, _, _ := g.target(); g.be && !(a.Bus == 0 && a.Dev == 0) {
		v = bits.ReverseBytes32(v) // PCI0_CMD bit 0 is 0 on big-endian
	}
	return v
}

func (g *gtModel) ReadReg(off uint32, _ int) uint32 {
	switch off {
	case gtISD:
		return g.swapReg(gtISDStub)
	case gtCfgAddr:
		return g.swapReg(g.addr)
	case gtCfgData:
		a, reg, ok := g.target()
		if !ok {
			return 0xffffffff
		}
		return g.dataSwap(g.bus.Read32(a, reg))
	}
	return 0
}

func (g *gtModel) WriteReg(off uint32, _ int, v uint32) {
	switch off {
	case gtCfgAddr:
		g.addr = g.swapReg(v) & 0x80fffffc
	case gtCfgData:
		if a, reg, ok := g.target(); ok {
			g.bus.Write32(a, reg, g.dataSwap(v))
		}
	}
}

// TestGTByteOrder runs enumeration through the GT model on both CPU
// endians (with hwsim's posted writes): IDs come out right, the GT's own
// ID included, and BAR writes land unswapped.
func TestGTByteOrder(t *testing.T) {
	for _, be := range []bool{false, true} {
		for seed := uint64(1); seed <= 5; seed++ {
			b := maltaBus()
			sys := hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: be})
			m := &gtModel{be: be, bus: b}
			regs := sys.Bus.Map("gt", GTSize, m)
			gt := NewGT(regionOrder{regs, barrier.LittleEndian, be}, regionOrder{regs, barrier.Native, be})
			if id := gt.Read32(Addr{0, 0, 0}, RegID); id != 0x462011ab {
				t.Fatalf("be=%v: GT id %#x", be, id)
			}
			devs, errs := Scan(gt)
			if len(errs) != 0 || len(devs) != 8 {
				t.Fatalf("be=%v: %d devices, %v", be, len(devs), errs)
			}
			if err := Assign(gt, devs); err != nil {
				t.Fatal(err)
			}
			pc := devs[5]
			if pc.Addr != (Addr{0, 11, 0}) || pc.Vendor != 0x1022 || pc.Device != 0x2000 || pc.IRQ != 10 {
				t.Fatalf("be=%v: %v", be, pc)
			}
			if got := b[pc.Addr].bar[0]; got != uint32(pc.BAR[0].Addr)|1 || b[pc.Addr].cmd != CmdIO|CmdMemory {
				t.Fatalf("be=%v: pcnet BAR0 register %#x cmd %#x, assigned %#x", be, got, b[pc.Addr].cmd, pc.BAR[0].Addr)
			}
		}
	}
}

// regionOrder gives an hwsim region (which carries CPU-order values) a
// byte order, as barrier.MMIO does for real hardware.
type regionOrder struct {
	r     *hwsim.Region
	order barrier.Order
	be    bool
}

func (o regionOrder) swap() bool {
	return (o.order == barrier.LittleEndian && o.be) || (o.order == barrier.BigEndian && !o.be)
}
func (o regionOrder) sw(v uint32) uint32 {
	if o.swap() {
		return bits.ReverseBytes32(v)
	}
	return v
}
func (o regionOrder) Read8(off uint32) uint8       { return o.r.Read8(off) }
func (o regionOrder) Read16(off uint32) uint16     { panic("unused") }
func (o regionOrder) Read32(off uint32) uint32     { return o.sw(o.r.Read32(off)) }
func (o regionOrder) Write8(off uint32, v uint8)   { o.r.Write8(off, v) }
func (o regionOrder) Write16(off uint32, v uint16) { panic("unused") }
func (o regionOrder) Write32(off uint32, v uint32) { o.r.Write32(off, o.sw(v)) }
func (o regionOrder) Barrier()                     { o.r.Barrier() }

// twoNICBus is QEMU malta's bus 0 with the on-board pcnet and the WAN
// pcnet internal/qemu adds in slot 0x0c (the monitor's info pci for that
// command line): no VGA (-nodefaults), PIIX4 PIRQ routes at their reset
// values (A, B to line 10, C, D to line 11; QEMU 7.2 hw/isa/piix4.c).
func twoNICBus() bus {
	pcnet := func() *fn {
		return &fn{id: 0x20001022, classRev: 0x02000010, pin: 1, mask: [6]uint32{0: 0xffffffe1, 1: 0xffffffe0}}
	}
	return bus{
		{0, 0, 0}:  {id: 0x462011ab, classRev: 0x06000010, pin: 1},
		{0, 10, 0}: {id: 0x71108086, classRev: 0x06010000, header: 0x80, regs: map[uint8]uint32{0x60: 0x0b0b0a0a}},
		{0, 10, 1}: {id: 0x71118086, classRev: 0x01018a01, mask: [6]uint32{4: 0xfffffff1}},
		{0, 10, 2}: {id: 0x71128086, classRev: 0x0c030001, pin: 4, mask: [6]uint32{4: 0xffffffe1}},
		{0, 10, 3}: {id: 0x71138086, classRev: 0x06800003, pin: 1},
		{0, 11, 0}: pcnet(),
		{0, 12, 0}: pcnet(),
	}
}

// TestTwoPcnets enumerates the two-NIC bus through the GT model on both
// byte orders: both pcnets are found with I/O and memory BARs of their
// own, decoding enabled, and distinct i8259 lines (slot 11: PIRQB, line
// 10; slot 12: PIRQC, line 11), written to their interrupt line
// registers.
func TestTwoPcnets(t *testing.T) {
	for _, be := range []bool{false, true} {
		b := twoNICBus()
		sys := hwsim.New(hwsim.Config{Seed: 1, BigEndianCPU: be})
		regs := sys.Bus.Map("gt", GTSize, &gtModel{be: be, bus: b})
		gt := NewGT(regionOrder{regs, barrier.LittleEndian, be}, regionOrder{regs, barrier.Native, be})
		devs, errs := Scan(gt)
		if len(errs) != 0 || len(devs) != 7 {
			t.Fatalf("be=%v: %d devices, %v", be, len(devs), errs)
		}
		if err := Assign(gt, devs); err != nil {
			t.Fatal(err)
		}
		var nics []*Device
		for _, d := range devs {
			if d.Vendor == 0x1022 && d.Device == 0x2000 {
				nics = append(nics, d)
			}
		}
		if len(nics) != 2 {
			t.Fatalf("be=%v: %d pcnets", be, len(nics))
		}
		lan, wan := nics[0], nics[1]
		if lan.Addr != (Addr{0, 11, 0}) || lan.IRQ != 10 || wan.Addr != (Addr{0, 12, 0}) || wan.IRQ != 11 {
			t.Fatalf("be=%v: lan %v, wan %v", be, lan, wan)
		}
		for _, d := range nics {
			f := b[d.Addr]
			if d.BAR[0].Kind != BARIO || d.BAR[1].Kind != BARMem32 || f.cmd != CmdIO|CmdMemory ||
				f.bar[0] != uint32(d.BAR[0].Addr)|1 || f.bar[1] != uint32(d.BAR[1].Addr) || f.intr != uint32(d.IRQ) {
				t.Fatalf("be=%v: %v: BARs %#x %#x cmd %#x line %d", be, d, f.bar[0], f.bar[1], f.cmd, f.intr)
			}
		}
		if lan.BAR[0].Addr == wan.BAR[0].Addr || lan.BAR[1].Addr == wan.BAR[1].Addr {
			t.Fatalf("be=%v: pcnets share a window: %v, %v", be, lan, wan)
		}
		SetMaster(gt, wan.Addr)
		if b[wan.Addr].cmd != 7 || b[lan.Addr].cmd != 3 {
			t.Fatalf("be=%v: SetMaster(wan): wan cmd %#x, lan cmd %#x", be, b[wan.Addr].cmd, b[lan.Addr].cmd)
		}
	}
}

// TestSharedLineSlot: a pcnet put in PCI slot 2 of the Malta board
// (device 19) drives PIRQB like the on-board one, so both get line 10.
func TestSharedLineSlot(t *testing.T) {
	b := twoNICBus()
	b[Addr{0, 19, 0}], b[Addr{0, 12, 0}] = b[Addr{0, 12, 0}], nil
	delete(b, Addr{0, 12, 0})
	devs, errs := Scan(b)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for _, d := range devs {
		if (d.Dev == 11 || d.Dev == 19) && d.IRQ != 10 {
			t.Fatalf("%v: irq %d, want 10", d, d.IRQ)
		}
	}
}
