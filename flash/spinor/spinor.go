// Package spinor drives a 25-series SPI NOR flash on chip select 0 of the
// AR71xx-family SPI flash controller (AR71xx, AR724x, AR913x, AR933x and
// relatives: the block at 0x1F00_0000).
//
// The controller has two modes. With FS = 0 it maps the flash into memory
// at its base and turns CPU loads into READ commands by itself: ReadAt uses
// that window. With FS = 1 (GPIO/command mode) the CPU drives the SPI pins
// through IO_CTRL (chip selects, clock, data out) and reads data in from
// the RDS shift register: every other command (RDID, WREN, page program,
// erase, status polls) is bit-banged that way, exactly as the FreeBSD and
// Linux drivers do, and the driver returns to memory-mapped mode after each
// operation. A mutex keeps two callers from interleaving; nothing else may
// use the controller meanwhile.
//
// Facts: FreeBSD sys/mips/atheros/ar71xxreg.h and ar71xx_spi.c (register
// offsets and bits; per bit: IO_CTRL = CS|DO, then CS|DO|CLK, MSB first;
// after 8 bits CLK low, then RDS & 0xff; barrier writes around chip-select
// changes; detach restores CTRL and writes FS = 0); Linux
// drivers/spi/spi-ath79.c (FS GPIO bit 0, CTRL saved and restored around
// command mode, 0x43 written to CTRL = remap disable bit 6 + clock divider
// 3). SPI NOR commands and status bits: Macronix MX25L6405D and Winbond
// W25Q128 datasheets, FreeBSD sys/dev/flash/mx25l.c, Linux
// drivers/mtd/spi-nor/core.c (RDID 0x9F: manufacturer, memory type,
// capacity with size = 1 << capacity for common parts; RDSR 0x05 WIP bit 0,
// WEL bit 1; WREN 0x06 before every program and erase; page program 0x02
// within a 256-byte page; sector erase 0x20 4 KiB; block erase 0xD8 64 KiB;
// READ 0x03).
package spinor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/flash"
)

// Controller registers (FreeBSD ar71xxreg.h AR71XX_SPI_*).
const (
	RegFS     = 0x00 // function select: bit 0 = GPIO (command) mode
	RegCtrl   = 0x04 // clock divider bits 5:0, remap disable bit 6
	RegIOCtrl = 0x08 // pins in command mode
	RegRDS    = 0x0c // read data shift register

	FSGPIO          = 1 << 0
	CtrlRemapDis    = 1 << 6
	CtrlDivMask     = 1<<6 - 1
	IOCtrlDO        = 1 << 0
	IOCtrlCLK       = 1 << 8
	IOCtrlCS0       = 1 << 16
	IOCtrlCS1       = 1 << 17
	IOCtrlCS2       = 1 << 18
	IOCtrlCSMask    = 7 << 16
	ctrlCommandMode = CtrlRemapDis | 3 // what FreeBSD and Linux write (0x43)
)

// SPI NOR commands and status bits.
const (
	CmdPageProgram = 0x02
	CmdRead        = 0x03
	CmdRDSR        = 0x05
	CmdWREN        = 0x06
	CmdSectorErase = 0x20
	CmdBlockErase  = 0xd8
	CmdRDID        = 0x9f

	SRWIP = 1 << 0
	SRWEL = 1 << 1
)

// Geometry.
const (
	PageSize   = 256
	SectorSize = 4 << 10
	BlockSize  = 64 << 10 // the uniform erase block this driver offers

	minCapacity = 16 // 64 KiB
	maxCapacity = 24 // 16 MiB: three address bytes and the controller's window
)

// Status poll budgets. A poll is one RDSR transaction: at least 17 register
// writes, so well over a microsecond even on the fastest part; the budgets
// are far above the datasheet maxima (page program 5 ms, 4 KiB erase
// 400 ms, 64 KiB erase 2 s for the MX25L6405D) before Sleep is counted.
const (
	DefaultProgramPolls = 1 << 14
	DefaultErasePolls   = 1 << 20
	// spinPolls is how many polls run back to back before each further
	// poll is preceded by a Sleep(pollInterval), when Sleep is set.
	spinPolls    = 16
	pollInterval = 100 * time.Microsecond
	// floatPolls consecutive 0xFF status reads mean no chip is driving
	// the data line (absent, or unpowered): a real status register with
	// SRWD, every block-protect bit, WEL and WIP set at once does not stay
	// that way while an operation completes.
	floatPolls = 64
)

// Errors.
var (
	ErrID         = errors.New("spinor: no usable JEDEC ID")
	ErrTimeout    = errors.New("spinor: timed out waiting for the chip (WIP)")
	ErrNoResponse = errors.New("spinor: status reads all ones: no chip answering")
	ErrWriteLatch = errors.New("spinor: write enable latch did not set")
	ErrVerify     = errors.New("spinor: read-back differs from what was written")
	ErrRange      = errors.New("spinor: offset or length outside the device or misaligned")
)

// Config describes where the controller is.
type Config struct {
	// Regs is the controller's register block (FS, CTRL, IO_CTRL, RDS).
	Regs barrier.Space
	// Mem is the memory-mapped flash window (the controller base, with
	// FS = 0), at least as large as the flash.
	Mem barrier.Space
	// BigEndian is the CPU's byte order, which decides how a 32-bit load
	// from the window packs flash bytes (AR71xx: big-endian).
	BigEndian bool
	// Sleep, if set, is called between status polls of long operations
	// instead of spinning.
	Sleep func(time.Duration)
	// ProgramPolls and ErasePolls bound status polling (defaults above).
	ProgramPolls, ErasePolls int
}

// Stats count operations.
type Stats struct {
	Erases, Programs, Polls uint64
}

// Flash is one SPI NOR chip behind the controller.
type Flash struct {
	mu    sync.Mutex
	regs  barrier.Space
	mem   barrier.Space
	order binary.ByteOrder
	sleep func(time.Duration)

	progPolls, erasePolls int
	id                    [3]byte
	size                  int64
	savedCtrl             uint32
	Stats                 Stats
}

var _ flash.Device = (*Flash)(nil)

// New identifies the chip by its JEDEC ID and returns it with the
// controller in memory-mapped mode.
func New(cfg Config) (*Flash, error) {
	if cfg.Regs == nil || cfg.Mem == nil {
		return nil, errors.New("spinor: Config needs Regs and Mem")
	}
	f := &Flash{regs: cfg.Regs, mem: cfg.Mem, order: binary.LittleEndian, sleep: cfg.Sleep,
		progPolls: cfg.ProgramPolls, erasePolls: cfg.ErasePolls}
	if cfg.BigEndian {
		f.order = binary.BigEndian
	}
	if f.progPolls <= 0 {
		f.progPolls = DefaultProgramPolls
	}
	if f.erasePolls <= 0 {
		f.erasePolls = DefaultErasePolls
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids [2][3]byte
	f.enter()
	for i := range ids {
		f.selectChip()
		f.xfer(CmdRDID)
		for j := range ids[i] {
			ids[i][j] = f.xfer(0)
		}
		f.deselect()
	}
	f.leave()
	id := ids[0]
	switch {
	case id == [3]byte{0, 0, 0} || id == [3]byte{0xff, 0xff, 0xff}:
		return nil, fmt.Errorf("%w: RDID answered %02x %02x %02x (no chip, or the data line is stuck)", ErrID, id[0], id[1], id[2])
	case ids[1] != id:
		return nil, fmt.Errorf("%w: RDID unstable (% x, then % x)", ErrID, id[:], ids[1][:])
	case id[2] < minCapacity || id[2] > maxCapacity:
		// UNVERIFIED for every vendor: capacity byte = log2(size) holds
		// for Macronix, Winbond, Spansion/Cypress 25-series, GigaDevice
		// and others, but not universally.
		return nil, fmt.Errorf("%w: JEDEC %02x %02x %02x: capacity byte %#x is not 2^16..2^24 bytes", ErrID, id[0], id[1], id[2], id[2])
	}
	f.id = id
	f.size = 1 << id[2]
	return f, nil
}

// JEDEC returns the manufacturer and device ID (memory type << 8 | capacity).
func (f *Flash) JEDEC() (mfr uint8, dev uint16) {
	return f.id[0], uint16(f.id[1])<<8 | uint16(f.id[2])
}

// Size implements flash.Device.
func (f *Flash) Size() int64 { return f.size }

// BlockSize implements flash.Device: 64 KiB block erase.
func (f *Flash) BlockSize() int { return BlockSize }

// ProgramUnit implements flash.Device: any byte can be programmed.
func (f *Flash) ProgramUnit() int { return 1 }

// --- controller: command mode and bit-banging ---

// enter switches to command mode. The barriers keep FS, CTRL and IO_CTRL
// writes (different registers, which a write buffer may reorder) in order.
func (f *Flash) enter() {
	f.regs.Write32(RegFS, FSGPIO)
	f.regs.Barrier()
	f.savedCtrl = f.regs.Read32(RegCtrl)
	f.regs.Write32(RegCtrl, ctrlCommandMode)
	f.regs.Barrier()
	f.regs.Write32(RegIOCtrl, IOCtrlCSMask)
	f.regs.Barrier()
}

// leave restores CTRL and returns to memory-mapped mode, and makes sure
// that has happened before the next window read.
func (f *Flash) leave() {
	f.regs.Barrier()
	f.regs.Write32(RegCtrl, f.savedCtrl)
	f.regs.Barrier()
	f.regs.Write32(RegFS, 0)
	f.regs.Barrier()
}

const ioSelected = IOCtrlCSMask &^ IOCtrlCS0 // CS0 low, CS1/CS2 high, CLK low

func (f *Flash) selectChip() {
	f.regs.Barrier()
	f.regs.Write32(RegIOCtrl, ioSelected)
}

func (f *Flash) deselect() {
	f.regs.Write32(RegIOCtrl, IOCtrlCSMask)
	f.regs.Barrier()
}

// send clocks one byte out, MSB first, leaving the clock low. Writes to the
// one IO_CTRL register stay in order without barriers.
func (f *Flash) send(b uint8) {
	var v uint32
	for bit := 7; bit >= 0; bit-- {
		v = ioSelected | uint32(b>>bit&1)*IOCtrlDO
		f.regs.Write32(RegIOCtrl, v)
		f.regs.Write32(RegIOCtrl, v|IOCtrlCLK)
	}
	f.regs.Write32(RegIOCtrl, v)
}

// xfer sends b and returns the byte the chip sent meanwhile (the low byte
// of RDS). The barrier makes every clock edge reach the controller before
// RDS is read, and keeps the read from being answered by an earlier one.
func (f *Flash) xfer(b uint8) uint8 {
	f.send(b)
	f.regs.Barrier()
	return uint8(f.regs.Read32(RegRDS))
}

func (f *Flash) sendAddr(a uint32) {
	f.send(uint8(a >> 16))
	f.send(uint8(a >> 8))
	f.send(uint8(a))
}

// status reads the status register once.
func (f *Flash) status() uint8 {
	f.selectChip()
	f.send(CmdRDSR)
	s := f.xfer(0)
	f.deselect()
	return s
}

// writeEnable sends WREN and checks that the latch set.
func (f *Flash) writeEnable() error {
	f.selectChip()
	f.send(CmdWREN)
	f.deselect()
	if s := f.status(); s&SRWEL == 0 || s == 0xff {
		return fmt.Errorf("%w (status %#02x)", ErrWriteLatch, s)
	}
	return nil
}

// wait polls WIP until the chip is done, at most polls times.
func (f *Flash) wait(polls int) error {
	floating := 0
	for i := 0; i < polls; i++ {
		if f.sleep != nil && i >= spinPolls {
			f.sleep(pollInterval)
		}
		f.Stats.Polls++
		s := f.status()
		if s == 0xff {
			if floating++; floating >= floatPolls {
				return ErrNoResponse
			}
			continue
		}
		floating = 0
		if s&SRWIP == 0 {
			return nil
		}
	}
	return ErrTimeout
}

// --- flash.Device ---

func (f *Flash) check(off int64, n int) error {
	if off < 0 || n < 0 || off > f.size || int64(n) > f.size-off {
		return fmt.Errorf("%w: %d bytes at %#x (size %#x)", ErrRange, n, off, f.size)
	}
	return nil
}

// ReadAt implements flash.Device through the memory-mapped window: 32-bit
// loads for the aligned middle, byte loads at the edges.
func (f *Flash) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check(off, len(p)); err != nil {
		return 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.readWindow(p, uint32(off))
	return len(p), nil
}

func (f *Flash) readWindow(p []byte, a uint32) {
	n := 0
	for n < len(p) && (a+uint32(n))&3 != 0 {
		p[n] = f.mem.Read8(a + uint32(n))
		n++
	}
	for ; len(p)-n >= 4; n += 4 {
		f.order.PutUint32(p[n:], f.mem.Read32(a+uint32(n)))
	}
	for ; n < len(p); n++ {
		p[n] = f.mem.Read8(a + uint32(n))
	}
}

// Erase implements flash.Device: 64 KiB block erase, then a blank check.
func (f *Flash) Erase(off int64) error {
	return f.erase(off, BlockSize, CmdBlockErase)
}

// EraseSector erases the 4 KiB sector at off, then checks it is blank.
func (f *Flash) EraseSector(off int64) error {
	return f.erase(off, SectorSize, CmdSectorErase)
}

func (f *Flash) erase(off int64, unit int, cmd uint8) error {
	if err := f.check(off, unit); err != nil || off%int64(unit) != 0 {
		return fmt.Errorf("%w: erase of %d bytes at %#x (size %#x)", ErrRange, unit, off, f.size)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enter()
	err := f.writeEnable()
	if err == nil {
		f.selectChip()
		f.send(cmd)
		f.sendAddr(uint32(off))
		f.deselect()
		f.Stats.Erases++
		err = f.wait(f.erasePolls)
	}
	f.leave()
	if err != nil {
		return fmt.Errorf("spinor: erase %d KiB at %#x: %w", unit>>10, off, err)
	}
	return f.verifyBlank(uint32(off), unit)
}

func (f *Flash) verifyBlank(a uint32, n int) error {
	for i := uint32(0); i < uint32(n); i += 4 {
		if v := f.mem.Read32(a + i); v != 0xffffffff {
			return fmt.Errorf("spinor: erase at %#x: %w: word at %#x is %#08x", a, ErrVerify, a+i, v)
		}
	}
	return nil
}

// Program implements flash.Device: page programs split at 256-byte page
// boundaries (a page program wraps inside its page), each preceded by WREN
// and completed by a status poll; chunks that are all 0xFF are skipped
// (erased flash already holds them). The range is read back afterwards.
func (f *Flash) Program(off int64, p []byte) error {
	if err := f.check(off, len(p)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enter()
	var err error
	for i := 0; i < len(p) && err == nil; {
		a := uint32(off) + uint32(i)
		n := PageSize - int(a%PageSize)
		if n > len(p)-i {
			n = len(p) - i
		}
		if chunk := p[i : i+n]; !allOnes(chunk) {
			err = f.programPage(a, chunk)
		}
		i += n
	}
	f.leave()
	if err != nil {
		return err
	}
	return f.verify(uint32(off), p)
}

func (f *Flash) programPage(a uint32, chunk []byte) error {
	if err := f.writeEnable(); err != nil {
		return fmt.Errorf("spinor: program at %#x: %w", a, err)
	}
	f.selectChip()
	f.send(CmdPageProgram)
	f.sendAddr(a)
	for _, b := range chunk {
		f.send(b)
	}
	f.deselect()
	f.Stats.Programs++
	if err := f.wait(f.progPolls); err != nil {
		return fmt.Errorf("spinor: program at %#x: %w", a, err)
	}
	return nil
}

func allOnes(p []byte) bool {
	for _, b := range p {
		if b != 0xff {
			return false
		}
	}
	return true
}

// verify compares the window with p, a word at a time where aligned.
func (f *Flash) verify(a uint32, p []byte) error {
	for i := 0; i < len(p); {
		if (a+uint32(i))&3 == 0 && len(p)-i >= 4 {
			got := f.mem.Read32(a + uint32(i))
			if want := f.order.Uint32(p[i:]); got != want {
				return fmt.Errorf("spinor: program at %#x: %w: word at %#x is %#08x, want %#08x", a, ErrVerify, a+uint32(i), got, want)
			}
			i += 4
			continue
		}
		if b := f.mem.Read8(a + uint32(i)); b != p[i] {
			return fmt.Errorf("spinor: program at %#x: %w: byte at %#x is %#02x, want %#02x", a, ErrVerify, a+uint32(i), b, p[i])
		}
		i++
	}
	return nil
}
