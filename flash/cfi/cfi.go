// Package cfi drives NOR flash that speaks the Intel/Sharp command set
// (CFI primary vendor command set 0x0001 or 0x0003: Intel StrataFlash
// 28F320J3 and relatives, and QEMU's cfi.pflash01) on a 32-bit bus: the
// Malta boot flash, as QEMU emulates it (one 32-bit bank) and as the board
// builds it (two x16 chips side by side).
//
// The driver identifies the chip by a CFI query, then offers array reads,
// block erase, word program and block lock bits, each completed by polling
// the status register and decoding its error bits; every erase and program
// is verified by reading the array back. Registers go through a
// barrier.Space: a bare-metal kseg1 MMIO window, or the hwsim bus with
// cfisim behind it in tests.
//
// Facts (command codes, status bits, CFI query layout) are from the Intel
// "Common Flash Interface (CFI) and Command Sets" application note AP-646,
// the 28F320J3 datasheet, and QEMU's hw/block/pflash_cfi01.c with the malta
// instance in hw/mips/malta.c for QEMU's behaviour (bank width 4, query
// bytes at 4-byte stride, the command byte is the low byte of the bus word,
// data is stored in CPU byte order).
package cfi

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/flash"
)

// Command codes (AP-646 "Intel/Sharp command set"; 28F320J3 table 4).
const (
	CmdReadArray   = 0xff
	CmdReadID      = 0x90 // read identifier codes / block lock status
	CmdCFIQuery    = 0x98
	CmdReadStatus  = 0x70
	CmdClearStatus = 0x50
	CmdErase       = 0x20 // block erase setup; confirmed by CmdConfirm
	CmdProgram     = 0x40 // word program setup (0x10 is an alias)
	CmdConfirm     = 0xd0 // erase confirm, unlock confirm, resume
	CmdLockSetup   = 0x60 // followed by CmdLockSet or CmdConfirm (unlock)
	CmdLockSet     = 0x01
)

// Status register bits (28F320J3 table 15).
const (
	SRReady     = 0x80 // write state machine ready
	SRSuspended = 0x40 // erase suspended
	SRErase     = 0x20 // erase (or clear lock bits) error
	SRProgram   = 0x10 // program (or set lock bit) error
	SRVpp       = 0x08 // Vpp low: operation aborted
	SRLocked    = 0x02 // operation aborted: block locked
	srErrors    = SRErase | SRProgram | SRVpp | SRLocked
)

// CFI query table, byte indices (AP-646 tables 1-5). On a 32-bit bus each
// index sits at byte offset 4*index.
const (
	qryQ          = 0x10 // 'Q', 'R', 'Y'
	qryCmdSet     = 0x13 // primary vendor command set, 16-bit LE
	qryProgTyp    = 0x1f // typical word program time, 2^n µs
	qryEraseTyp   = 0x21 // typical block erase time, 2^n ms
	qryProgMax    = 0x23 // max word program time, 2^n × typical
	qryEraseMax   = 0x25 // max block erase time, 2^n × typical
	qrySize       = 0x27 // device size, 2^n bytes
	qryNumRegions = 0x2c // number of erase block regions
	qryRegion0    = 0x2d // blocks-1 (16-bit LE), block size/256 (16-bit LE)

	cmdSetIntelExt = 0x0001
	cmdSetIntelStd = 0x0003
)

// BusWidth is the bus width this driver supports: Malta's 32-bit flash bank.
const BusWidth = 4

// lockStatusWord is the word index, within a block, of the block lock status
// in read-identifier mode (28F320J3 table 5: block base + 2).
const lockStatusWord = 2

// Errors. Status errors wrap ErrStatus.
var (
	ErrNoCFI    = errors.New("cfi: no CFI query response (not a CFI flash)")
	ErrCmdSet   = errors.New("cfi: unsupported command set")
	ErrGeometry = errors.New("cfi: unsupported geometry")
	ErrStatus   = errors.New("cfi: operation failed")
	ErrLocked   = fmt.Errorf("%w: %w", ErrStatus, flash.ErrLocked)
	ErrVpp      = fmt.Errorf("%w: Vpp low", ErrStatus)
	ErrSequence = fmt.Errorf("%w: improper command sequence", ErrStatus)
	ErrEraseOp  = fmt.Errorf("%w: erase error", ErrStatus)
	ErrProgOp   = fmt.Errorf("%w: program error", ErrStatus)
	ErrTimeout  = errors.New("cfi: timed out waiting for the write state machine")
	ErrVerify   = errors.New("cfi: read-back differs from what was written")
	ErrRange    = errors.New("cfi: offset or length outside the device or misaligned")
)

// Geometry is what the CFI query reported, scaled to the whole bank.
type Geometry struct {
	CmdSet     uint16
	Interleave int   // chips side by side on the bus (1: QEMU, 2: Malta's 2×x16)
	Size       int64 // bytes
	BlockSize  int   // bytes
	Blocks     int
	// Worst-case operation times from the query, in status polls: the
	// driver gives up after these many polls (with a floor), so a dead
	// chip cannot hang the caller.
	ProgramPolls, ErasePolls int
}

// Stats count operations, for the "writes per config save" measurement.
type Stats struct {
	Erases, Programs, Polls uint64
}

// Chip is one flash bank behind a barrier.Space mapped over all of it.
type Chip struct {
	s     barrier.Space
	g     Geometry
	order binary.ByteOrder // CPU order: how flash bytes map to bus words
	Stats Stats
}

var _ flash.Device = (*Chip)(nil)

// Minimum poll budgets: a poll is at least one bus read (~100 ns on real
// hardware), so these are far above any real chip's worst case.
const (
	minProgramPolls = 1 << 16
	minErasePolls   = 1 << 24
)

// Probe identifies the flash in s (mapped over the whole bank) with a CFI
// query and returns it in read-array mode. bigEndianCPU selects how bytes
// are packed into bus words: the chip stores a 32-bit write in the CPU's
// byte order, so this keeps ReadAt/Program byte-exact on either endian.
func Probe(s barrier.Space, bigEndianCPU bool) (*Chip, error) {
	c := &Chip{s: s, order: binary.LittleEndian}
	if bigEndianCPU {
		c.order = binary.BigEndian
	}
	c.cmd(0, CmdReadArray)
	c.cmd(0, CmdCFIQuery)
	s.Barrier()
	g, err := c.parseQuery()
	c.cmd(0, CmdReadArray)
	s.Barrier()
	if err != nil {
		return nil, err
	}
	c.g = g
	return c, nil
}

// q reads CFI query byte i (one chip's view; with two chips both halves
// carry the same byte).
func (c *Chip) q(i uint32) uint8 { return uint8(c.s.Read32(i * BusWidth)) }

func (c *Chip) q16(i uint32) uint16 { return uint16(c.q(i)) | uint16(c.q(i+1))<<8 }

func (c *Chip) parseQuery() (Geometry, error) {
	var g Geometry
	w := c.s.Read32(qryQ * BusWidth)
	if c.q(qryQ) != 'Q' || c.q(qryQ+1) != 'R' || c.q(qryQ+2) != 'Y' {
		return g, ErrNoCFI
	}
	// Two x16 chips answer on both halves of the bus: 0x00510051.
	g.Interleave = 1
	if w>>16 == w&0xffff {
		g.Interleave = 2
	}
	g.CmdSet = c.q16(qryCmdSet)
	if g.CmdSet != cmdSetIntelExt && g.CmdSet != cmdSetIntelStd {
		return g, fmt.Errorf("%w %#04x (want Intel/Sharp 0x0001 or 0x0003)", ErrCmdSet, g.CmdSet)
	}
	size := c.q(qrySize)
	if size < 12 || size > 28 {
		return g, fmt.Errorf("%w: device size 2^%d", ErrGeometry, size)
	}
	g.Size = int64(g.Interleave) << size
	if n := c.q(qryNumRegions); n != 1 {
		return g, fmt.Errorf("%w: %d erase regions (only uniform blocks are supported)", ErrGeometry, n)
	}
	blocks := int(c.q16(qryRegion0)) + 1
	bsize := int(c.q16(qryRegion0+2)) * 256
	if bsize == 0 {
		bsize = 128 // AP-646: a zero field means 128 bytes
	}
	g.BlockSize = bsize * g.Interleave
	g.Blocks = blocks
	if int64(blocks)*int64(g.BlockSize) != g.Size {
		return g, fmt.Errorf("%w: %d blocks of %d bytes ≠ size %d", ErrGeometry, blocks, g.BlockSize, g.Size)
	}
	g.ProgramPolls = budget(uint(c.q(qryProgTyp))+uint(c.q(qryProgMax)), 0, minProgramPolls)
	g.ErasePolls = budget(uint(c.q(qryEraseTyp))+uint(c.q(qryEraseMax)), 10, minErasePolls)
	return g, nil
}

// budget turns a 2^n (µs, or ms when shift is 10) worst case into a poll
// count, assuming a poll takes at least 1/8 µs, with a floor.
func budget(log2 uint, shift uint, floor int) int {
	if log2+shift > 24 {
		return 1 << 27
	}
	n := (1 << (log2 + shift)) * 8
	if n < floor {
		n = floor
	}
	return n
}

// Geometry returns what the query found.
func (c *Chip) Geometry() Geometry { return c.g }

// Size implements flash.Device.
func (c *Chip) Size() int64 { return c.g.Size }

// BlockSize implements flash.Device.
func (c *Chip) BlockSize() int { return c.g.BlockSize }

// ProgramUnit implements flash.Device: one bus word.
func (c *Chip) ProgramUnit() int { return BusWidth }

// cmd writes a command byte to every chip on the bus at off. QEMU takes the
// low byte of the word; real interleaved x16 chips each take their half.
func (c *Chip) cmd(off uint32, b uint8) {
	c.s.Write32(off, uint32(b)|uint32(b)<<16)
}

// status polls the status register at off until the state machine is
// ready, then decodes its error bits. Each poll is preceded by a barrier so
// the command that started the operation has reached the chip and the read
// is not satisfied by an earlier one.
func (c *Chip) status(off uint32, polls int) error {
	for i := 0; i < polls; i++ {
		c.Stats.Polls++
		c.s.Barrier()
		v := c.s.Read32(off)
		lo, hi := uint8(v), uint8(v>>16)
		if c.g.Interleave == 1 {
			hi = SRReady
		}
		if lo&hi&SRReady == 0 {
			continue
		}
		if e := (lo | hi) & srErrors; e != 0 {
			c.cmd(off, CmdClearStatus) // error bits are sticky until cleared
			return statusErr(e)
		}
		return nil
	}
	return ErrTimeout
}

func statusErr(sr uint8) error {
	switch {
	case sr&SRLocked != 0:
		return ErrLocked
	case sr&SRVpp != 0:
		return ErrVpp
	case sr&(SRErase|SRProgram) == SRErase|SRProgram:
		return ErrSequence
	case sr&SRErase != 0:
		return ErrEraseOp
	default:
		return ErrProgOp
	}
}

func (c *Chip) check(off int64, n int, unit int) error {
	if off < 0 || n < 0 || off > c.g.Size || int64(n) > c.g.Size-off || off%int64(unit) != 0 || n%unit != 0 {
		return fmt.Errorf("%w: %d bytes at %#x (size %#x, unit %d)", ErrRange, n, off, c.g.Size, unit)
	}
	return nil
}

// ReadAt implements flash.Device. The chip must be in read-array mode,
// which every method here leaves it in. It reads each bus word once and
// stores its bytes with shifts: a [4]byte handed to the ByteOrder
// interface escaped to the heap, an allocation per word that made reading
// the two 64 KiB configuration slots at boot cost 12 M instructions.
func (c *Chip) ReadAt(p []byte, off int64) (int, error) {
	if err := c.check(off, len(p), 1); err != nil {
		return 0, err
	}
	be := c.order == binary.ByteOrder(binary.BigEndian)
	a, n := uint32(off), 0
	for n < len(p) {
		w := a &^ 3
		v := c.s.Read32(w)
		if a == w && len(p)-n >= 4 {
			if be {
				binary.BigEndian.PutUint32(p[n:n+4], v)
			} else {
				binary.LittleEndian.PutUint32(p[n:n+4], v)
			}
			a, n = a+4, n+4
			continue
		}
		// A word the read starts or ends inside: its bytes from a on.
		for i := a - w; i < 4 && n < len(p); i++ {
			sh := 8 * i // little-endian: byte i is bits 8i..8i+7
			if be {
				sh = 24 - 8*i
			}
			p[n] = byte(v >> sh)
			a, n = a+1, n+1
		}
	}
	return n, nil
}

// Erase implements flash.Device: block erase, then a blank check.
func (c *Chip) Erase(off int64) error {
	if err := c.check(off, c.g.BlockSize, c.g.BlockSize); err != nil {
		return err
	}
	a := uint32(off)
	c.cmd(a, CmdClearStatus)
	c.cmd(a, CmdErase)
	c.cmd(a, CmdConfirm)
	c.Stats.Erases++
	err := c.status(a, c.g.ErasePolls)
	c.cmd(a, CmdReadArray)
	c.s.Barrier()
	if err != nil {
		return fmt.Errorf("erase block at %#x: %w", off, err)
	}
	for i := uint32(0); i < uint32(c.g.BlockSize); i += 4 {
		if v := c.s.Read32(a + i); v != 0xffffffff {
			return fmt.Errorf("erase block at %#x: %w: word at %#x is %#08x", off, ErrVerify, a+i, v)
		}
	}
	return nil
}

// Program implements flash.Device: word programs of erased flash. Words
// that are all ones are skipped (erased flash already holds them). Each
// program is completed by a status poll, and the range is read back.
func (c *Chip) Program(off int64, p []byte) error {
	if err := c.check(off, len(p), BusWidth); err != nil {
		return err
	}
	a := uint32(off)
	c.cmd(a, CmdClearStatus)
	var err error
	for i := 0; i < len(p) && err == nil; i += BusWidth {
		v := c.order.Uint32(p[i:])
		if v == 0xffffffff {
			continue
		}
		w := a + uint32(i)
		// Setup and data go to the same address, so the write buffer
		// keeps them in order without a barrier.
		c.cmd(w, CmdProgram)
		c.s.Write32(w, v)
		c.Stats.Programs++
		if e := c.status(w, c.g.ProgramPolls); e != nil {
			err = fmt.Errorf("program word at %#x: %w", w, e)
		}
	}
	c.cmd(a, CmdReadArray)
	c.s.Barrier()
	if err != nil {
		return err
	}
	for i := 0; i < len(p); i += BusWidth {
		if got, want := c.s.Read32(a+uint32(i)), c.order.Uint32(p[i:]); got != want {
			return fmt.Errorf("program at %#x: %w: word at %#x is %#08x, want %#08x", off, ErrVerify, a+uint32(i), got, want)
		}
	}
	return nil
}

// Locked reports the lock bit of the block at off (read-identifier mode).
func (c *Chip) Locked(off int64) (bool, error) {
	if err := c.check(off, c.g.BlockSize, c.g.BlockSize); err != nil {
		return false, err
	}
	a := uint32(off)
	c.cmd(a, CmdReadID)
	c.s.Barrier()
	v := c.s.Read32(a + lockStatusWord*BusWidth)
	c.cmd(a, CmdReadArray)
	c.s.Barrier()
	return v&0x00010001 != 0, nil
}

// Lock sets the lock bit of the block at off.
func (c *Chip) Lock(off int64) error { return c.lockOp(off, CmdLockSet) }

// Unlock clears the block lock bit(s). On chips with per-block lock bits
// (28F128P30, QEMU) it clears the block at off; on the J3 family the
// confirm clears every block's bit, as that chip defines.
func (c *Chip) Unlock(off int64) error { return c.lockOp(off, CmdConfirm) }

func (c *Chip) lockOp(off int64, second uint8) error {
	if err := c.check(off, c.g.BlockSize, c.g.BlockSize); err != nil {
		return err
	}
	a := uint32(off)
	c.cmd(a, CmdClearStatus)
	c.cmd(a, CmdLockSetup)
	c.s.Barrier()
	c.cmd(a, second)
	err := c.status(a, c.g.ErasePolls)
	c.cmd(a, CmdReadArray)
	c.s.Barrier()
	if err != nil {
		return fmt.Errorf("lock bits of block at %#x: %w", off, err)
	}
	return nil
}
