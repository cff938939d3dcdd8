// Package spinorsim is a hostile model of the AR71xx-family SPI flash
// controller (the block at 0x1F00_0000: FS, CTRL, IO_CTRL, RDS) with a
// 25-series SPI NOR flash chip on chip select 0, for testing flash/spinor
// and what is built on it. It is two hwsim.Devices sharing one chip: the
// controller's registers, and the memory-mapped flash window the controller
// serves when FS is 0. The driver reaches both through the hwsim bus, with
// its posted, reordered writes and stale reads.
//
// The controller is modelled at pin level: in command mode (FS bit 0 set)
// every IO_CTRL write drives CS0, CLK and DO; a rising CLK edge with CS0 low
// makes the chip sample DO and drive its next output bit, which the
// controller shifts into RDS (RDS = RDS<<1 | DI). The chip decodes bytes as
// they complete and executes write-type commands when CS0 goes high, as a
// real part does.
//
// Hazards it reproduces (each has a TestHazard in flash/spinor):
//
//   - Write enable: page program and erase are ignored unless a WREN
//     transaction set the write enable latch first; reported.
//   - Busy: after a program or erase the chip is busy (WIP) for a seeded
//     number of status-register bytes; every other command sent meanwhile
//     is ignored and reported.
//   - Memory-mapped read in command mode: reading the flash window while FS
//     is 1 returns garbage (the registers, not the flash) and is reported;
//     IO_CTRL writes while FS is 0 are ignored and reported.
//   - Read while busy: a window read before the busy period ends returns
//     garbage and is reported (the chip ignores the controller's read).
//   - Page wrap: page program data wraps inside its 256-byte page; data
//     that crosses the page end lands at the page start (reported, and the
//     array shows it).
//   - Real program semantics: programming only clears bits; programming a
//     byte that is not erased stores old AND new and is reported.
//   - Power loss at any bus write: PowerCutAt = N makes the N-th write that
//     reaches the model the last one. A program or erase in progress (from
//     its CS-high commit to the end of its busy period) is torn: an erase
//     leaves bytes old, erased or in between, a program leaves bytes with
//     some of their zero bits programmed. Afterwards writes are ignored and
//     reads float high (all ones). Image returns what survives; New with
//     that image is the "reboot".
//   - Transactions ending in the middle of a byte are ignored and reported.
//
// Facts: FreeBSD sys/mips/atheros/ar71xxreg.h (AR71XX_SPI_FS 0x00, CTRL
// 0x04, IO_CTRL 0x08 with CS0-2 bits 16-18, CLK bit 8, DO bit 0, RDS 0x0C)
// and ar71xx_spi.c (txrx: DO then CLK high per bit MSB first, then CLK low,
// then read RDS & 0xff); Linux drivers/spi/spi-ath79.c (FS GPIO bit 0,
// RDS read after up to 32 bits, FS=0 returns to memory-mapped mode, reads
// of the window at the controller base). SPI NOR command set: JEDEC JESD216
// and 25-series datasheets (Macronix MX25L6405D, Winbond W25Q128): 0x9F
// RDID, 0x05 RDSR (bit 0 WIP, bit 1 WEL), 0x06 WREN, 0x04 WRDI, 0x03 READ,
// 0x0B FAST_READ, 0x02 page program (256-byte page, wraps inside the page),
// 0x20 4 KiB sector erase, 0xD8 64 KiB block erase, 0xC7/0x60 chip erase.
package spinorsim

import (
	"fmt"

	"github.com/gowrt/gowrt/hwsim"
)

// Register offsets and bits (FreeBSD ar71xxreg.h); local so the model does
// not trust the driver's constants.
const (
	regFS     = 0x00
	regCtrl   = 0x04
	regIOCtrl = 0x08
	regRDS    = 0x0c
	RegsSize  = 0x10 // bytes of register space to map

	fsGPIO = 1 << 0
	ioDO   = 1 << 0
	ioCLK  = 1 << 8
	ioCS0  = 1 << 16
	ioCS   = 7 << 16

	// ctrlReset is the value CTRL reads before anyone writes it.
	// UNVERIFIED: the hardware reset value is not in the sources read;
	// 0x43 (remap disabled, divider 3) is what FreeBSD and Linux program.
	ctrlReset = 0x43
)

// SPI NOR command codes and status bits (25-series datasheets).
const (
	cmdWRSR      = 0x01
	cmdPP        = 0x02
	cmdRead      = 0x03
	cmdWRDI      = 0x04
	cmdRDSR      = 0x05
	cmdWREN      = 0x06
	cmdFastRead  = 0x0b
	cmdSE        = 0x20
	cmdCE        = 0xc7
	cmdCEAlt     = 0x60
	cmdBE        = 0xd8
	cmdRDID      = 0x9f
	srWIP        = 1 << 0
	srWEL        = 1 << 1
	PageSize     = 256
	SectorSize   = 4 << 10
	BlockSize    = 64 << 10
	maxAddrBytes = 3
)

// Config shapes the model.
type Config struct {
	// JEDEC is the RDID answer: manufacturer, memory type, capacity
	// (default C2 20 17: Macronix MX25L6405D, 8 MiB, unless RawID).
	JEDEC [3]byte
	// RawID answers JEDEC as given even when it is all zeros (a data
	// line stuck low).
	RawID bool
	// UnstableID answers RDID with seeded random bytes (bad wiring).
	UnstableID bool
	// Size is the array size in bytes (default 1<<JEDEC[2]); a multiple
	// of 64 KiB, at most 16 MiB (three address bytes).
	Size int
	// ProgramBusy, SectorEraseBusy, BlockEraseBusy, ChipEraseBusy bound
	// the seeded number of status bytes that read busy after each
	// operation (defaults 4, 16, 32, 64).
	ProgramBusy, SectorEraseBusy, BlockEraseBusy, ChipEraseBusy int
	// PowerCutAt, if nonzero, cuts power at that bus write (1-based).
	PowerCutAt uint64
}

type opKind uint8

const (
	opNone opKind = iota
	opProgram
	opErase
)

// pending is a program or erase between its commit (CS high) and the end
// of its busy period: the array still holds the old data, so a power cut
// can tear it.
type pending struct {
	kind opKind
	base int // page or erase unit start
	n    int // erase unit size
}

// Flash is the model: controller and chip.
type Flash struct {
	sys *hwsim.System
	cfg Config
	mem []byte

	// controller
	fs, ctrl, ioc uint32
	rds           uint32

	// chip
	sr      uint8
	busy    int
	op      pending
	selectd bool
	inBits  int   // bits received in this transaction
	cur     uint8 // byte being received
	outByte uint8 // byte being sent
	nbytes  int   // whole bytes received in this transaction
	cmd     uint8
	addr    int
	page    [PageSize]byte
	touched [PageSize]bool
	ppCount int // data bytes received by a page program

	opPage    [PageSize]byte // the page latch of the pending program
	opTouched [PageSize]bool

	writes uint64
	dead   bool

	// Counters of completed operations and of torn ones.
	Programs, Erases, Torn uint64
}

// New returns a model whose array starts as image (nil: all erased).
func New(sys *hwsim.System, cfg Config, image []byte) *Flash {
	if cfg.JEDEC == [3]byte{} && !cfg.RawID {
		cfg.JEDEC = [3]byte{0xc2, 0x20, 0x17}
	}
	if cfg.Size == 0 {
		cfg.Size = 1 << 20
		if c := cfg.JEDEC[2]; c >= 16 && c <= 24 {
			cfg.Size = 1 << c
		}
	}
	if cfg.Size <= 0 || cfg.Size%BlockSize != 0 || cfg.Size > 1<<24 {
		panic(fmt.Sprintf("spinorsim: size %#x is not a multiple of 64 KiB up to 16 MiB", cfg.Size))
	}
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&cfg.ProgramBusy, 4)
	def(&cfg.SectorEraseBusy, 16)
	def(&cfg.BlockEraseBusy, 32)
	def(&cfg.ChipEraseBusy, 64)
	f := &Flash{sys: sys, cfg: cfg, mem: make([]byte, cfg.Size), ctrl: ctrlReset, ioc: ioCS}
	if image == nil {
		for i := range f.mem {
			f.mem[i] = 0xff
		}
	} else {
		if len(image) != cfg.Size {
			panic(fmt.Sprintf("spinorsim: image is %d bytes, want %d", len(image), cfg.Size))
		}
		copy(f.mem, image)
	}
	return f
}

// MapRegs puts the controller's registers on sys's bus.
func (f *Flash) MapRegs(name string) *hwsim.Region {
	return f.sys.Bus.Map(name, RegsSize, regs{f})
}

// MapWindow puts the memory-mapped flash window on sys's bus.
func (f *Flash) MapWindow(name string) *hwsim.Region {
	return f.sys.Bus.Map(name, uint32(len(f.mem)), window{f})
}

// Image returns a copy of the array: what a reboot would find.
func (f *Flash) Image() []byte { return append([]byte(nil), f.mem...) }

// Size is the array size.
func (f *Flash) Size() int { return len(f.mem) }

// Dead reports whether power has been cut.
func (f *Flash) Dead() bool { return f.dead }

// Writes is the number of bus writes that reached the model.
func (f *Flash) Writes() uint64 { return f.writes }

// CutPowerAfter arranges for power to fail at the n-th write from now (n ≥ 1).
func (f *Flash) CutPowerAfter(n uint64) { f.cfg.PowerCutAt = f.writes + n }

// Busy reports whether a program or erase is in progress.
func (f *Flash) Busy() bool { return f.busy > 0 }

func (f *Flash) misuse(off int, format string, args ...any) {
	f.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: uint64(off), Region: "spinorsim", Detail: fmt.Sprintf(format, args...)})
}

// garbage is what a read returns that the flash did not answer.
func (f *Flash) garbage() uint32 {
	return uint32(f.sys.Sched.Intn(1<<16))<<16 | uint32(f.sys.Sched.Intn(1<<16))
}

// countWrite counts a bus write and reports whether it is the one at which
// the power fails.
func (f *Flash) countWrite() (cut bool) {
	f.writes++
	return f.cfg.PowerCutAt != 0 && f.writes >= f.cfg.PowerCutAt
}

func (f *Flash) powerFail() {
	if f.busy > 0 {
		f.tear()
	}
	f.dead = true
}

type regs struct{ f *Flash }

// ReadReg implements hwsim.Device for the controller registers.
func (r regs) ReadReg(off uint32, width int) uint32 {
	f := r.f
	if f.dead {
		return 0xffffffff
	}
	if width != 4 {
		f.misuse(int(off), "%d-byte register read", width)
	}
	switch off &^ 3 {
	case regFS:
		return f.fs
	case regCtrl:
		return f.ctrl
	case regIOCtrl:
		return f.ioc
	case regRDS:
		return f.rds
	}
	return 0
}

// WriteReg implements hwsim.Device for the controller registers.
func (r regs) WriteReg(off uint32, width int, val uint32) {
	f := r.f
	if f.dead {
		return
	}
	cut := f.countWrite()
	if width != 4 {
		f.misuse(int(off), "%d-byte register write", width)
	} else {
		switch off {
		case regFS:
			f.fs = val & fsGPIO
		case regCtrl:
			f.ctrl = val
		case regIOCtrl:
			if f.fs&fsGPIO == 0 {
				f.misuse(int(off), "IO_CTRL %#x written in memory-mapped mode (FS=0): ignored", val)
				break
			}
			f.pins(val)
		case regRDS:
			f.misuse(int(off), "write to read-only RDS")
		}
	}
	if cut {
		f.powerFail()
	}
}

// pins applies a new IO_CTRL value: chip select edges and clock edges.
func (f *Flash) pins(v uint32) {
	old := f.ioc
	f.ioc = v
	csLow := v&ioCS0 == 0
	switch {
	case old&ioCS0 != 0 && csLow:
		f.selectd = true
		f.inBits, f.nbytes, f.cmd, f.addr, f.ppCount = 0, 0, 0, 0, 0
		f.outByte = 0xff
	case old&ioCS0 == 0 && !csLow:
		f.selectd = false
		f.deselect()
		return
	}
	if !csLow || old&ioCLK != 0 || v&ioCLK == 0 {
		return // not a rising clock edge on a selected chip
	}
	// Rising edge: the chip drives its output bit, the controller
	// shifts it into RDS; the chip samples DO.
	bit := 7 - f.inBits%8
	if f.inBits%8 == 0 {
		f.outByte = f.output()
	}
	f.rds = f.rds<<1 | uint32(f.outByte>>bit&1)
	f.cur = f.cur<<1 | uint8(v&ioDO)
	f.inBits++
	if f.inBits%8 == 0 {
		f.byteIn(f.cur)
		f.nbytes++
	}
}

// output is the byte the chip sends while it receives byte number nbytes.
func (f *Flash) output() uint8 {
	if f.nbytes == 0 {
		return 0xff // the chip's output is high-impedance during the opcode
	}
	switch f.cmd {
	case cmdRDSR:
		if f.busy > 0 {
			f.busy--
			s := f.sr | srWIP
			if f.busy == 0 {
				f.complete() // the next status byte reads done
			}
			return s
		}
		return f.sr
	}
	if f.busy > 0 {
		return 0xff
	}
	switch f.cmd {
	case cmdRDID:
		if i := f.nbytes - 1; i < 3 {
			if f.cfg.UnstableID {
				return uint8(f.sys.Sched.Intn(256))
			}
			return f.cfg.JEDEC[i]
		}
		return 0
	case cmdRead, cmdFastRead:
		first := 1 + maxAddrBytes
		if f.cmd == cmdFastRead {
			first++ // one dummy byte
		}
		if f.nbytes < first {
			return 0xff
		}
		a := (f.addr + f.nbytes - first) % len(f.mem)
		return f.mem[a]
	}
	return 0xff
}

// byteIn handles a whole byte received from the controller.
func (f *Flash) byteIn(b uint8) {
	n := f.nbytes
	if n == 0 {
		f.cmd = b
		if f.busy > 0 && b != cmdRDSR {
			f.misuse(0, "command %#02x sent while the chip is busy (WIP): ignored", b)
		}
		return
	}
	if n <= maxAddrBytes {
		f.addr = f.addr<<8 | int(b)
		return
	}
	if f.cmd == cmdPP && f.busy == 0 {
		i := (f.addr + f.ppCount) % PageSize
		f.page[i] = b
		f.touched[i] = true
		f.ppCount++
	}
}

// deselect runs a write-type command when chip select goes high.
func (f *Flash) deselect() {
	defer f.resetPage()
	if f.inBits == 0 {
		return
	}
	if f.inBits%8 != 0 {
		f.misuse(0, "transaction ended after %d bits, not a whole number of bytes: ignored", f.inBits)
		return
	}
	if f.busy > 0 {
		return // reported when the opcode arrived
	}
	need := 1 + maxAddrBytes
	switch f.cmd {
	case cmdWREN:
		f.sr |= srWEL
	case cmdWRDI:
		f.sr &^= srWEL
	case cmdRDSR, cmdRDID, cmdRead, cmdFastRead:
	case cmdPP:
		if !f.writeEnabled("page program") {
			return
		}
		if f.nbytes < need+1 {
			f.misuse(f.addr, "page program with %d bytes: no data", f.nbytes)
			return
		}
		base := f.addr &^ (PageSize - 1) % len(f.mem)
		if start := f.addr % PageSize; start+f.ppCount > PageSize {
			f.misuse(f.addr, "page program of %d bytes at %#x crosses the 256-byte page: data wrapped to %#x", f.ppCount, f.addr, base)
		}
		f.start(pending{kind: opProgram, base: base}, f.cfg.ProgramBusy)
	case cmdSE, cmdBE, cmdCE, cmdCEAlt:
		unit, busy := SectorSize, f.cfg.SectorEraseBusy
		switch f.cmd {
		case cmdBE:
			unit, busy = BlockSize, f.cfg.BlockEraseBusy
		case cmdCE, cmdCEAlt:
			unit, busy, need = len(f.mem), f.cfg.ChipEraseBusy, 1
		}
		if f.nbytes != need {
			f.misuse(f.addr, "erase %#02x with %d bytes, want %d: ignored", f.cmd, f.nbytes, need)
			return
		}
		if !f.writeEnabled("erase") {
			return
		}
		base := f.addr % len(f.mem) &^ (unit - 1)
		f.start(pending{kind: opErase, base: base, n: unit}, busy)
	case cmdWRSR:
		f.misuse(0, "write status register: not modelled")
	default:
		f.misuse(0, "unknown command %#02x", f.cmd)
	}
}

func (f *Flash) writeEnabled(what string) bool {
	if f.sr&srWEL == 0 {
		f.misuse(f.addr, "%s at %#x without WREN (write enable latch clear): ignored", what, f.addr)
		return false
	}
	return true
}

func (f *Flash) resetPage() {
	for i := range f.page {
		f.page[i], f.touched[i] = 0xff, false
	}
}

// start begins a program or erase: the array changes when the busy period
// ends (complete) or is torn if the power fails first (tear).
func (f *Flash) start(op pending, maxBusy int) {
	if op.kind == opProgram {
		for i := range f.page {
			if !f.touched[i] {
				continue
			}
			if old := f.mem[op.base+i]; f.page[i]&^old != 0 {
				f.misuse(op.base+i, "program %#02x over %#02x: flash can only clear bits (erase first)", f.page[i], old)
			}
		}
		// Keep the latched data with the pending op.
		f.op = op
		f.opPage, f.opTouched = f.page, f.touched
	} else {
		f.op = op
	}
	f.busy = 1 + f.sys.Sched.Intn(maxBusy)
}

func (f *Flash) complete() {
	switch f.op.kind {
	case opProgram:
		for i := range f.opPage {
			if f.opTouched[i] {
				f.mem[f.op.base+i] &= f.opPage[i]
			}
		}
		f.Programs++
	case opErase:
		for i := f.op.base; i < f.op.base+f.op.n; i++ {
			f.mem[i] = 0xff
		}
		f.Erases++
	}
	f.op = pending{}
	f.sr &^= srWEL | srWIP
}

// tear leaves a program or erase half done: a program has some of its zero
// bits programmed; an erase leaves each byte old, erased, or with some
// bits set.
func (f *Flash) tear() {
	switch f.op.kind {
	case opProgram:
		for i := range f.opPage {
			if f.opTouched[i] {
				f.mem[f.op.base+i] &= f.opPage[i] | uint8(f.sys.Sched.Intn(256))
			}
		}
	case opErase:
		for i := f.op.base; i < f.op.base+f.op.n; i++ {
			switch f.sys.Sched.Intn(3) {
			case 1:
				f.mem[i] = 0xff
			case 2:
				f.mem[i] |= uint8(f.sys.Sched.Intn(256))
			}
		}
	}
	f.Torn++
	f.op = pending{}
	f.busy = 0
}

type window struct{ f *Flash }

// ReadReg implements hwsim.Device for the memory-mapped window: bytes in
// the CPU's order, as a load from flash mapped in memory returns them.
func (w window) ReadReg(off uint32, width int) uint32 {
	f := w.f
	if f.dead {
		return 0xffffffff
	}
	if f.fs&fsGPIO != 0 {
		f.misuse(int(off), "flash window read while the controller is in command mode (FS=1): garbage")
		return f.garbage()
	}
	if f.busy > 0 {
		f.misuse(int(off), "flash window read while the chip is busy (WIP): garbage")
		return f.garbage()
	}
	o := f.sys.ByteOrder()
	switch width {
	case 1:
		return uint32(f.mem[off])
	case 2:
		return uint32(o.Uint16(f.mem[off:]))
	}
	return o.Uint32(f.mem[off:])
}

// WriteReg implements hwsim.Device: the window is read-only.
func (w window) WriteReg(off uint32, width int, val uint32) {
	f := w.f
	if f.dead {
		return
	}
	cut := f.countWrite()
	f.misuse(int(off), "write %#x to the memory-mapped flash window: ignored (program through the controller)", val)
	if cut {
		f.powerFail()
	}
}
