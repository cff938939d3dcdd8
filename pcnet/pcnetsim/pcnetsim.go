// Package pcnetsim is a hostile model of the AMD PCnet-PCI II (Am79C970A)
// Ethernet controller in software style 2, written from the datasheet facts
// and QEMU's behaviour (hw/net/pcnet.c, hw/net/pcnet-pci.c), for testing
// the pcnet driver on hwsim.
//
// Hazards it reproduces:
//
//   - Its DMA engine is an hwsim agent: it runs at seeded points between any
//     two driver accesses and takes a descriptor as soon as it sees OWN, so
//     a driver that sets OWN before the descriptor is complete, or without
//     a barrier (hwsim posts and reorders the stores), hands it a
//     half-written descriptor. The model checks what it takes: the BCNT
//     ONES nibble (QEMU rejects a descriptor without it), the buffer
//     address (must be memory; hwsim reports a bad address) and the length.
//   - Buffers are in hwsim's cached memory: a TX buffer not written back
//     (missing PREWRITE) is reported as a stale device read; an RX buffer
//     still dirty in the cache when the frame lands (missing PREREAD) is
//     reported too.
//   - A receive buffer must belong to one descriptor at a time: the
//     model reports an RX descriptor it takes whose buffer overlaps the
//     buffer of another RX descriptor the chip owns or of a TX descriptor
//     it owns and has not sent yet, and a TX descriptor whose buffer
//     overlaps that of an RX descriptor the chip owns (a driver that
//     refills its ring with a buffer kept for transmission has the frame
//     overwritten before it is sent, or two frames land in one buffer).
//   - The interrupt is a level line that stays asserted until every cause
//     bit is written back as one; frames that find no RX descriptor are
//     counted as missed (CSR0 MISS), as the chip does.
//   - The received message count includes the 4-byte FCS (QEMU appends it).
//   - Unicast frames for other stations are dropped unless the init block
//     set promiscuous mode, so a bridge port that forgets it loses traffic.
//
// Every rule a driver breaks is reported through hwsim.System.Report as a
// ModelRule misuse naming it.
package pcnetsim

import (
	"fmt"
	"hash/crc32"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
)

// Register offsets (WIO) and CSR0 bits, local so the model does not trust
// the driver's constants.
const (
	rRDP   = 0x10
	rRAP   = 0x12
	rReset = 0x14
	rBDP   = 0x16

	c0ERR  = 0x8000
	c0MISS = 0x1000
	c0MERR = 0x0800
	c0RINT = 0x0400
	c0TINT = 0x0200
	c0IDON = 0x0100
	c0INTR = 0x0080
	c0IENA = 0x0040
	c0RXON = 0x0020
	c0TXON = 0x0010
	c0TDMD = 0x0008
	c0STOP = 0x0004
	c0STRT = 0x0002
	c0INIT = 0x0001
	causes = 0x7f00 // BABL CERR MISS MERR RINT TINT IDON: write one to clear

	own = 0x8000
	stp = 0x0200
	enp = 0x0100
	err = 0x4000
)

// Config shapes the model.
type Config struct {
	MAC  [6]byte
	Line int // interrupt line on Ctl
	// TxOnDemand makes the TX engine look at its ring only after the
	// driver wrote TDMD (transmit demand), until it finds no descriptor
	// it owns: a driver that queues a frame and never rings the doorbell
	// stalls. (The real chip also polls the ring every few milliseconds;
	// the model does not, so a lost doorbell shows.) Without it the
	// engine takes a descriptor as soon as it sees OWN, which catches
	// descriptors handed over half-written.
	TxOnDemand bool
	// OnTransmit receives each frame the chip sends (without FCS). It
	// runs with the System lock held and must not block or call the model;
	// the slice is only valid during the call.
	OnTransmit func(frame []byte)
}

// Chip is the model.
type Chip struct {
	sys *hwsim.System
	ctl *hwsim.Controller
	cfg Config

	rap   uint16
	csr   [128]uint16
	bcr   [32]uint16
	link  bool
	style uint16

	inited         bool
	prom           bool
	rdra, tdra     uint64
	rlen, tlen     int
	rxIdx, txIdx   int
	rxq            [][]byte
	txFrame        [4096]byte
	Sent, Received uint64
	Missed         uint64
	Filtered       uint64 // unicast frames for other stations (not promiscuous)
	Doorbells      uint64 // CSR0 writes with TDMD (transmit demand)
	RAPWrites      uint64 // register address port writes
}

// New returns a chip with its link up, in the reset state.
func New(sys *hwsim.System, ctl *hwsim.Controller, cfg Config) *Chip {
	c := &Chip{sys: sys, ctl: ctl, cfg: cfg, link: true}
	c.reset()
	sys.Sched.AddAgent("pcnet", c.step)
	return c
}

// Map puts the chip's I/O BAR on the bus.
func (c *Chip) Map(name string) *hwsim.Region { return c.sys.Bus.Map(name, 0x20, c) }

func (c *Chip) reset() {
	c.rap = 0 // S_RESET clears it (QEMU hw/net/pcnet.c, pcnet_s_reset)
	c.csr = [128]uint16{}
	c.csr[0] = c0STOP
	c.csr[88], c.csr[89] = 0x1003, 0x0262 // part 0x2621: Am79C970A
	c.bcr = [32]uint16{}
	c.bcr[20] = 0
	c.inited = false
	c.rxIdx, c.txIdx = 0, 0
	c.irq()
}

func (c *Chip) misuse(format string, a ...any) {
	c.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Region: "pcnetsim", Detail: fmt.Sprintf(format, a...)})
}

// SetLink changes the link state (BCR4 LEDOUT). Takes the lock.
func (c *Chip) SetLink(up bool) { c.sys.Do(func() { c.link = up }) }

// Deliver queues a frame from the wire (without FCS). Takes the lock. The
// chip receives it when its agent runs and an RX descriptor is free.
func (c *Chip) Deliver(frame []byte) {
	c.sys.Do(func() { c.rxq = append(c.rxq, append([]byte(nil), frame...)) })
}

// Pending is the number of frames waiting to be received. Takes the lock.
func (c *Chip) Pending() (n int) {
	c.sys.Do(func() { n = len(c.rxq) })
	return n
}

// Pump runs the chip's DMA engine from its own goroutine until stop is
// closed, as the real chip runs while the driver waits for an interrupt.
func (c *Chip) Pump(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		c.sys.Sched.Settle(4)
		time.Sleep(20 * time.Microsecond)
	}
}

// ReadReg implements hwsim.Device.
func (c *Chip) ReadReg(off uint32, width int) uint32 {
	switch {
	case off < 0x10:
		v := uint32(0)
		for i := 0; i < width; i++ {
			b := byte('W')
			if int(off)+i < 6 {
				b = c.cfg.MAC[int(off)+i]
			}
			v |= uint32(b) << (8 * i) // little-endian bus
		}
		return v
	case width != 2:
		c.misuse("%d-byte access at %#x in 16-bit I/O mode", width, off)
		return 0xffffffff
	case off == rRAP:
		return uint32(c.rap)
	case off == rRDP:
		return uint32(c.readCSR(c.rap))
	case off == rReset:
		c.reset()
		return 0
	case off == rBDP:
		if c.rap == 4 {
			v := c.bcr[4] &^ 0x8000
			if c.link {
				v |= 0x8000
			}
			return uint32(v)
		}
		if c.rap < 32 {
			return uint32(c.bcr[c.rap])
		}
	}
	return 0
}

func (c *Chip) readCSR(r uint16) uint16 {
	if r >= 128 {
		return 0
	}
	return c.csr[r]
}

// WriteReg implements hwsim.Device.
func (c *Chip) WriteReg(off uint32, width int, v uint32) {
	if width != 2 {
		c.misuse("%d-byte write at %#x in 16-bit I/O mode", width, off)
		return
	}
	switch off {
	case rRAP:
		c.rap = uint16(v) & 0x7f
		c.RAPWrites++
	case rRDP:
		c.writeCSR(c.rap, uint16(v))
	case rBDP:
		if c.rap == 20 {
			c.bcr[20] = uint16(v) & 0xff
			if v&0xff == 2 {
				c.bcr[20] |= 0x0300 // SSIZE32 and CSRPCNET follow SWSTYLE 2
			}
		} else if c.rap < 32 {
			c.bcr[c.rap] = uint16(v)
		}
	}
}

func (c *Chip) writeCSR(r, v uint16) {
	if r != 0 {
		if r < 128 && r != 88 && r != 89 {
			if c.csr[0]&c0STOP == 0 && (r == 1 || r == 2 || r == 15) {
				c.misuse("CSR%d written while the chip is running", r)
			}
			c.csr[r] = v
		}
		return
	}
	c0 := c.csr[0]
	c0 &^= v & causes
	c0 = c0&^c0IENA | v&c0IENA
	switch {
	case v&c0STOP != 0:
		c0 = c0STOP
		c.inited = false
	case v&c0INIT != 0:
		c0 &^= c0STOP
		c.csr[0] = c0
		c.init()
		c0 = c.csr[0]
	}
	if v&c0STRT != 0 {
		if !c.inited {
			c.misuse("STRT before a completed INIT")
		} else {
			c0 = c0&^c0STOP | c0STRT | c0RXON | c0TXON
		}
	}
	if v&c0TDMD != 0 {
		c0 |= c0TDMD
		c.Doorbells++
	}
	c.csr[0] = c0
	c.irq()
}

// init reads the init block (SSIZE32) from CSR1/2.
func (c *Chip) init() {
	if c.bcr[20]&0xff != 2 {
		c.misuse("INIT with SWSTYLE %d: this model (and the driver) use style 2", c.bcr[20]&0xff)
		c.csr[0] |= c0MERR | c0ERR
		return
	}
	addr := uint64(c.csr[1]) | uint64(c.csr[2])<<16
	var ib [28]byte
	if addr%4 != 0 {
		c.misuse("init block at %#x is not 4-byte aligned", addr)
	}
	if e := c.sys.Mem.DevRead(addr, ib[:]); e != nil {
		c.csr[0] |= c0MERR | c0ERR
		return
	}
	rl, tl := int(ib[2]>>4), int(ib[3]>>4)
	if rl > 9 || tl > 9 {
		c.misuse("init block ring lengths 2^%d/2^%d", rl, tl)
	}
	c.rlen, c.tlen = 1<<min(rl, 9), 1<<min(tl, 9)
	c.prom = ib[1]&0x80 != 0 // MODE bit 15: PROM
	c.rdra = uint64(le32(ib[20:]))
	c.tdra = uint64(le32(ib[24:]))
	if c.rdra%16 != 0 || c.tdra%16 != 0 {
		c.misuse("descriptor rings at %#x/%#x not 16-byte aligned", c.rdra, c.tdra)
	}
	var padr [6]byte
	copy(padr[:], ib[4:10])
	if padr != c.cfg.MAC {
		c.misuse("init block station address % x differs from the PROM's % x", padr, c.cfg.MAC)
	}
	c.inited = true
	c.rxIdx, c.txIdx = 0, 0
	c.csr[0] |= c0IDON | c0INIT
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// irq recomputes INTR and drives the level line.
func (c *Chip) irq() {
	if c.csr[0]&causes&^(0x6000) != 0 { // BABL/CERR are not interrupt causes here
		c.csr[0] |= c0INTR
	} else {
		c.csr[0] &^= c0INTR
	}
	if c.csr[0]&c0MISS != 0 || c.csr[0]&c0MERR != 0 {
		c.csr[0] |= c0ERR
	} else {
		c.csr[0] &^= c0ERR
	}
	if c.ctl == nil {
		return
	}
	if c.csr[0]&(c0INTR|c0IENA) == c0INTR|c0IENA {
		c.ctl.Raise(c.cfg.Line)
	} else {
		c.ctl.Lower(c.cfg.Line)
	}
}

// step is the DMA engine: one transmit and one receive at most per run.
func (c *Chip) step() bool {
	if !c.inited || c.csr[0]&c0STRT == 0 {
		return false
	}
	progress := c.txStep()
	if c.rxStep() {
		progress = true
	}
	if progress {
		c.irq()
	}
	return progress
}

func (c *Chip) load(addr uint64) (uint32, bool) {
	v, e := c.sys.Mem.DevLoad32(addr, barrier.LittleEndian)
	return v, e == nil
}

func (c *Chip) store(addr uint64, v uint32) {
	_ = c.sys.Mem.DevStore32(addr, v, barrier.LittleEndian)
}

// length decodes a BCNT field, checking the ONES nibble.
func (c *Chip) length(ctl uint32, what string, d uint64) (int, bool) {
	b := uint16(ctl)
	if b&0xf000 != 0xf000 {
		c.misuse("%s descriptor at %#x: BCNT %#04x lacks the ONES nibble (half-written descriptor?)", what, d, b)
		return 0, false
	}
	n := int(-int16(b|0xf000)) & 0xfff
	if n == 0 {
		n = 4096
	}
	return n, true
}

func (c *Chip) txStep() bool {
	if c.cfg.TxOnDemand && c.csr[0]&c0TDMD == 0 {
		return false
	}
	d := c.tdra + uint64(c.txIdx*16)
	ctl, ok := c.load(d + 4)
	if !ok || ctl>>16&own == 0 {
		c.csr[0] &^= c0TDMD
		return false
	}
	st := uint16(ctl >> 16)
	addr, _ := c.load(d)
	n, good := c.length(ctl, "TX", d)
	if good && st&(stp|enp) != stp|enp {
		c.misuse("TX descriptor at %#x: status %#04x: frames must be STP|ENP (one buffer)", d, st)
		good = false
	}
	if good && (n < 14 || n > 1518) {
		c.misuse("TX descriptor at %#x: length %d", d, n)
		good = false
	}
	if good {
		c.checkOwner(false, d, uint64(addr), n)
	}
	var frame []byte
	if good {
		frame = c.txFrame[:n]
		if e := c.sys.Mem.DevRead(uint64(addr), frame); e != nil {
			good = false
		}
	}
	if good {
		c.Sent++
		if c.cfg.OnTransmit != nil {
			c.cfg.OnTransmit(frame)
		}
		c.store(d+8, 0)
		c.store(d+4, uint32(st&^own)<<16|ctl&0xffff)
	} else {
		c.store(d+8, 1<<31) // BUFF: the frame was abandoned
		c.store(d+4, uint32((st|err)&^own)<<16|ctl&0xffff)
	}
	c.csr[0] |= c0TINT
	c.txIdx = (c.txIdx + 1) % c.tlen
	return true
}

func (c *Chip) rxStep() bool {
	if len(c.rxq) == 0 {
		return false
	}
	d := c.rdra + uint64(c.rxIdx*16)
	ctl, ok := c.load(d + 4)
	if f := c.rxq[0]; !c.prom && len(f) >= 6 && f[0]&1 == 0 && [6]byte(f[:6]) != c.cfg.MAC {
		c.rxq = c.rxq[1:] // address filter: unicast for another station
		c.Filtered++
		return true
	}
	if !ok || ctl>>16&own == 0 {
		// No descriptor: the chip drops the frame and counts a miss.
		c.rxq = c.rxq[1:]
		c.Missed++
		c.csr[0] |= c0MISS
		return true
	}
	frame := c.rxq[0]
	c.rxq = c.rxq[1:]
	addr, _ := c.load(d)
	n, good := c.length(ctl, "RX", d)
	msg := len(frame) + 4
	if good && n < msg {
		c.misuse("RX descriptor at %#x: buffer of %d bytes for a %d-byte frame (chaining not modelled)", d, n, msg)
		good = false
	}
	if good {
		c.checkOwner(true, d, uint64(addr), n)
	}
	st := uint16(0)
	if good {
		buf := make([]byte, msg)
		copy(buf, frame)
		fcs := crc32.ChecksumIEEE(frame)
		buf[len(frame)], buf[len(frame)+1], buf[len(frame)+2], buf[len(frame)+3] = byte(fcs), byte(fcs>>8), byte(fcs>>16), byte(fcs>>24)
		if e := c.sys.Mem.DevWrite(uint64(addr), buf); e != nil {
			good = false
		}
	}
	if good {
		st = stp | enp
		c.store(d+8, uint32(msg))
		c.Received++
	} else {
		st = err | 0x0400 // BUFF
	}
	c.store(d+4, uint32(st)<<16|ctl&0xffff)
	c.csr[0] |= c0RINT
	c.rxIdx = (c.rxIdx + 1) % c.rlen
	return true
}

// checkOwner reports the buffer [addr, addr+n) of descriptor d (an RX
// one if rx) if a descriptor the chip also owns, another RX one or a TX
// one not yet sent, has a buffer overlapping it.
func (c *Chip) checkOwner(rx bool, d, addr uint64, n int) {
	what := "TX"
	if rx {
		what = "RX"
	}
	rings := []struct {
		what string
		base uint64
		size int
	}{{"RX", c.rdra, c.rlen}, {"TX", c.tdra, c.tlen}}
	for _, r := range rings {
		for i := 0; i < r.size; i++ {
			od := r.base + uint64(i*16)
			if od == d {
				continue
			}
			ctl, ok := c.load(od + 4)
			if !ok || ctl>>16&own == 0 || uint16(ctl)&0xf000 != 0xf000 {
				continue
			}
			oa, _ := c.load(od)
			on := int(-int16(uint16(ctl)|0xf000)) & 0xfff
			if (rx || r.what == "RX") && uint64(oa) < addr+uint64(n) && addr < uint64(oa)+uint64(on) {
				c.misuse("%s descriptor at %#x: buffer %#x+%d overlaps the buffer %#x+%d of %s descriptor %#x, which the chip also owns",
					what, d, addr, n, oa, on, r.what, od)
				return
			}
		}
	}
}
