// Package cfisim is a hostile model of an Intel/Sharp command-set CFI NOR
// flash on a 32-bit bus (one bank, as QEMU's cfi.pflash01 presents Malta's
// boot flash), for testing flash/cfi and what is built on it. It is a
// hwsim.Device: the driver reaches it through the hwsim bus, with its posted
// writes and stale reads.
//
// Hazards it reproduces (each has a TestHazard in flash/cfi):
//
//   - Power loss at any write cycle: PowerCutAt = N makes the N-th bus write
//     that reaches the chip the last one. If that write starts an erase or a
//     program, the operation is torn as real NOR tears it: an interrupted
//     erase leaves every word of the block old, erased or in between (bits
//     partly set), an interrupted program leaves the word with only some of
//     its zero bits programmed. After the cut, writes are ignored and reads
//     float high (0xFFFFFFFF). Image returns what survives, for a "reboot".
//   - Real program semantics: programming can only clear bits. Programming
//     a word that is not erased stores old AND new and is reported as a
//     misuse (QEMU would just store the new value and hide the bug).
//   - Busy write state machine: after an erase or program the chip stays
//     busy for a seeded number of status reads; reads return status, not
//     data, until the driver writes Read Array; commands written while busy
//     are ignored and reported.
//   - Block lock bits: program or erase of a locked block fails with the
//     locked and error status bits, which stay set until Clear Status.
//   - Improper command sequences (e.g. erase setup not followed by confirm)
//     set both error bits and are reported.
//
// Facts: Intel 28F320J3 datasheet (command bus cycles, status register),
// AP-646 (CFI query layout), QEMU hw/block/pflash_cfi01.c.
package cfisim

import (
	"encoding/binary"
	"fmt"

	"github.com/gowrt/gowrt/hwsim"
)

// Config shapes the model. Blocks*BlockSize must be a power of two.
type Config struct {
	Blocks    int // erase blocks (QEMU malta: 64)
	BlockSize int // bytes (QEMU malta: 64 KiB)
	// ProgramBusy and EraseBusy bound the seeded number of status reads
	// that see the chip busy after a program or erase (default 4 and 16).
	ProgramBusy, EraseBusy int
	// PowerCutAt, if nonzero, cuts power at that write cycle (1-based).
	PowerCutAt uint64
	// LockedAtPowerUp sets every block's lock bit (28F128P30 behaviour).
	LockedAtPowerUp bool
}

type mode uint8

const (
	modeArray mode = iota
	modeStatus
	modeID
	modeQuery
)

type setup uint8

const (
	setupNone setup = iota
	setupErase
	setupProgram
	setupLock
)

// Command and status values (28F320J3 tables 4 and 15); kept local so the
// model does not trust the driver's constants.
const (
	srReady   = 0x80
	srErase   = 0x20
	srProgram = 0x10
	srLocked  = 0x02
)

// Flash is the model.
type Flash struct {
	sys    *hwsim.System
	cfg    Config
	order  binary.ByteOrder
	mem    []byte
	locked []bool
	query  [0x40]byte

	mode  mode
	setup setup
	sr    uint8
	busy  int

	writes uint64
	dead   bool

	// Counters of completed operations and of torn ones.
	Erases, Programs, Torn uint64
}

// New returns a model whose array starts as image (nil: all erased). image
// must be Blocks*BlockSize bytes.
func New(sys *hwsim.System, cfg Config, image []byte) *Flash {
	if cfg.ProgramBusy == 0 {
		cfg.ProgramBusy = 4
	}
	if cfg.EraseBusy == 0 {
		cfg.EraseBusy = 16
	}
	size := cfg.Blocks * cfg.BlockSize
	if size <= 0 || size&(size-1) != 0 || cfg.BlockSize%256 != 0 {
		panic(fmt.Sprintf("cfisim: %d blocks of %d bytes is not a power-of-two size", cfg.Blocks, cfg.BlockSize))
	}
	f := &Flash{sys: sys, cfg: cfg, order: sys.ByteOrder(), mem: make([]byte, size), locked: make([]bool, cfg.Blocks)}
	if image == nil {
		for i := range f.mem {
			f.mem[i] = 0xff
		}
	} else {
		if len(image) != size {
			panic(fmt.Sprintf("cfisim: image is %d bytes, want %d", len(image), size))
		}
		copy(f.mem, image)
	}
	for i := range f.locked {
		f.locked[i] = cfg.LockedAtPowerUp
	}
	f.buildQuery()
	return f
}

// buildQuery fills the CFI query table (AP-646 tables 1-5), with 28F320J3
// timing fields.
func (f *Flash) buildQuery() {
	q := f.query[:]
	copy(q[0x10:], "QRY")
	q[0x13], q[0x14] = 0x01, 0x00 // Intel/Sharp extended command set
	q[0x15], q[0x16] = 0x31, 0x00 // extended table address
	q[0x1b], q[0x1c] = 0x27, 0x36 // Vcc 2.7-3.6 V
	q[0x1f] = 0x07                // typical word program 128 µs
	q[0x21] = 0x0a                // typical block erase 1 s
	q[0x23], q[0x25] = 0x04, 0x04 // max = 16 × typical
	size := len(f.mem)
	n := 0
	for 1<<n < size {
		n++
	}
	q[0x27] = byte(n)
	q[0x28] = 0x02 // x8/x16 interface
	q[0x2a] = 0x05 // 32-byte write buffer
	q[0x2c] = 1    // one erase region
	binary.LittleEndian.PutUint16(q[0x2d:], uint16(f.cfg.Blocks-1))
	binary.LittleEndian.PutUint16(q[0x2f:], uint16(f.cfg.BlockSize/256))
}

// Map puts the model on sys's bus.
func (f *Flash) Map(name string) *hwsim.Region {
	return f.sys.Bus.Map(name, uint32(len(f.mem)), f)
}

// Image returns a copy of the array: what a reboot would find.
func (f *Flash) Image() []byte { return append([]byte(nil), f.mem...) }

// Dead reports whether power has been cut.
func (f *Flash) Dead() bool { return f.dead }

// Writes is the number of bus write cycles that reached the chip.
func (f *Flash) Writes() uint64 { return f.writes }

// CutPowerAfter arranges for power to fail at the n-th write cycle from now
// (n ≥ 1).
func (f *Flash) CutPowerAfter(n uint64) { f.cfg.PowerCutAt = f.writes + n }

// Locked reports a block's lock bit.
func (f *Flash) Locked(block int) bool { return f.locked[block] }

func (f *Flash) misuse(off uint32, format string, args ...any) {
	f.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Addr: uint64(off), Region: "cfisim", Detail: fmt.Sprintf(format, args...)})
}

// ReadReg implements hwsim.Device.
func (f *Flash) ReadReg(off uint32, width int) uint32 {
	if f.dead {
		return 0xffffffff
	}
	switch f.mode {
	case modeArray:
		switch width {
		case 1:
			return uint32(f.mem[off])
		case 2:
			return uint32(f.order.Uint16(f.mem[off:]))
		}
		return f.order.Uint32(f.mem[off:])
	case modeStatus:
		if f.busy > 0 {
			f.busy--
			return 0 // WSM busy: bit 7 clear
		}
		s := uint32(f.sr | srReady)
		return s | s<<16 // as QEMU's width-4 bank reports it
	case modeID:
		switch (off % uint32(f.cfg.BlockSize)) / 4 {
		case 0:
			return 0x89 // Intel
		case 1:
			return 0x16 // 28F320J3
		case 2:
			if f.locked[off/uint32(f.cfg.BlockSize)] {
				return 1
			}
		}
		return 0
	case modeQuery:
		return uint32(f.query[(off/4)%uint32(len(f.query))])
	}
	return 0
}

// WriteReg implements hwsim.Device.
func (f *Flash) WriteReg(off uint32, width int, val uint32) {
	if f.dead {
		return
	}
	f.writes++
	cut := f.cfg.PowerCutAt != 0 && f.writes >= f.cfg.PowerCutAt
	if width != 4 {
		f.misuse(off, "%d-byte write: the bank is 32 bits wide", width)
		return
	}
	if f.busy > 0 {
		if uint8(val) != 0x70 {
			f.misuse(off, "command %#x written while the chip is busy (poll status first)", val)
		}
		if cut {
			f.dead = true
		}
		return
	}
	blk := int(off) / f.cfg.BlockSize
	switch f.setup {
	case setupProgram:
		f.setup = setupNone
		f.mode = modeStatus
		if f.locked[blk] {
			f.sr |= srProgram | srLocked
			break
		}
		old := f.order.Uint32(f.mem[off:])
		if cut {
			f.tearProgram(off, old, val)
			break
		}
		if val&^old != 0 {
			f.misuse(off, "program %#08x over %#08x: flash can only clear bits (erase first)", val, old)
		}
		f.order.PutUint32(f.mem[off:], old&val)
		f.busy = 1 + f.sys.Sched.Intn(f.cfg.ProgramBusy)
		f.Programs++
	case setupErase:
		f.setup = setupNone
		f.mode = modeStatus
		if uint8(val) != 0xd0 {
			f.misuse(off, "erase setup followed by %#x, not confirm", val)
			f.sr |= srErase | srProgram
			break
		}
		if f.locked[blk] {
			f.sr |= srErase | srLocked
			break
		}
		if cut {
			f.tearErase(blk)
			break
		}
		base := blk * f.cfg.BlockSize
		for i := base; i < base+f.cfg.BlockSize; i++ {
			f.mem[i] = 0xff
		}
		f.busy = 1 + f.sys.Sched.Intn(f.cfg.EraseBusy)
		f.Erases++
	case setupLock:
		f.setup = setupNone
		f.mode = modeStatus
		switch uint8(val) {
		case 0x01:
			f.locked[blk] = true
		case 0xd0:
			f.locked[blk] = false
		default:
			f.misuse(off, "lock setup followed by %#x", val)
			f.sr |= srErase | srProgram
		}
	default:
		f.command(off, uint8(val))
	}
	if cut {
		f.dead = true
	}
}

func (f *Flash) command(off uint32, c uint8) {
	switch c {
	case 0xff, 0x00:
		f.mode = modeArray
	case 0x90:
		f.mode = modeID
	case 0x98:
		f.mode = modeQuery
	case 0x70:
		f.mode = modeStatus
	case 0x50:
		f.sr = 0
	case 0x20:
		f.setup, f.mode = setupErase, modeStatus
	case 0x40, 0x10:
		f.setup, f.mode = setupProgram, modeStatus
	case 0x60:
		f.setup, f.mode = setupLock, modeStatus
	default:
		f.misuse(off, "unknown command %#x", c)
		f.sr |= srErase | srProgram
		f.mode = modeStatus
	}
}

// tearProgram leaves the word with a seeded subset of its zero bits
// programmed: power failed while charge was being put on the cells.
func (f *Flash) tearProgram(off, old, val uint32) {
	partial := val | uint32(f.sys.Sched.Intn(1<<16))<<16 | uint32(f.sys.Sched.Intn(1<<16))
	f.order.PutUint32(f.mem[off:], old&partial)
	f.Torn++
}

// tearErase leaves each word of the block old, erased, or with a seeded
// subset of its bits changed: Intel parts first program every cell to zero
// and then pulse the block towards erased, so an interrupted erase leaves
// words partly cleared or partly set.
func (f *Flash) tearErase(blk int) {
	base := blk * f.cfg.BlockSize
	rnd := func() uint32 { return uint32(f.sys.Sched.Intn(1<<16))<<16 | uint32(f.sys.Sched.Intn(1<<16)) }
	for i := base; i < base+f.cfg.BlockSize; i += 4 {
		v := f.order.Uint32(f.mem[i:])
		switch f.sys.Sched.Intn(4) {
		case 1:
			v = 0xffffffff
		case 2:
			v &= rnd()
		case 3:
			v |= rnd()
		}
		f.order.PutUint32(f.mem[i:], v)
	}
	f.Torn++
}
