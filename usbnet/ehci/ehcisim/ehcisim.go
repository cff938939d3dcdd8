// Package ehcisim is a hostile model of an EHCI host controller (EHCI
// specification rev 1.0; QEMU hw/usb/hcd-ehci.c for how a software
// controller walks the schedules), with the ChipIdea/TDI additions of the
// AR71xx family's later cores (USBMODE, PORTSC PSPD, a transaction
// translator on the root ports), for testing the ehci driver on hwsim.
// It keeps its own register and descriptor facts and does not import the
// driver.
//
// The controller's engine is an hwsim agent: each step is one microframe
// (FRINDEX advances by one), in which it walks the periodic frame list's
// entry and visits a few queue heads of the asynchronous ring, running at
// most one transaction per visit against the usbsim.Function on the port.
// Hazards it reproduces:
//
//   - It runs at seeded points between any two driver accesses, and takes
//     a qTD as soon as its token says Active: a qTD activated before its
//     other words are written, or without a barrier, is run half-written.
//     The model remembers each qTD's buffer pointers as it fetched them
//     and reports a qTD whose pointers changed before it retired.
//   - Transfer buffers live in hwsim's cached memory, so a missing
//     PREWRITE or PREREAD/POSTREAD is caught by hwsim.
//   - It writes a retired qTD's token back late (one qH's in retirement
//     order, different qHs' in a seeded order; each before its
//     interrupt, all before the frame ends and before a doorbell is
//     answered), after the qH overlay already shows the next qTD: a
//     driver must judge every qTD by its own token, not by the overlay.
//   - Devices answer with short packets, babble (more than the qTD
//     asked), STALL, NAK, or nothing at all once unplugged mid-transfer.
//   - It caches the qH it is working on. A qH the driver unlinks is
//     still walked until the async-advance doorbell is answered; if the
//     driver rewrites or reuses it before then, the model reports it.
//
// Every rule a driver breaks is reported through hwsim.System.Report as a
// ModelRule misuse naming it.
package ehcisim

import (
	"fmt"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// Register facts, local so the model does not trust the driver's.
const (
	hciVersion = 0x0100

	oCmd    = 0x00
	oSts    = 0x04
	oIntr   = 0x08
	oFrIdx  = 0x0c
	oSeg    = 0x10
	oPer    = 0x14
	oAsync  = 0x18
	oCfg    = 0x40
	oPort   = 0x44
	oUSBMod = 0x68

	cRun   = 1 << 0
	cReset = 1 << 1
	cPSE   = 1 << 4
	cASE   = 1 << 5
	cIAAD  = 1 << 6

	sInt    = 1 << 0
	sErr    = 1 << 1
	sPCD    = 1 << 2
	sFLR    = 1 << 3
	sHSE    = 1 << 4
	sIAA    = 1 << 5
	sHalted = 1 << 12
	sPSS    = 1 << 14
	sASS    = 1 << 15

	pCCS   = 1 << 0
	pCSC   = 1 << 1
	pPE    = 1 << 2
	pPEC   = 1 << 3
	pOCC   = 1 << 5
	pPR    = 1 << 8
	pLS    = 3 << 10
	pLSK   = 1 << 10
	pLSJ   = 2 << 10
	pPP    = 1 << 12
	pPO    = 1 << 13
	pSpeed = 3 << 26

	tActive = 1 << 7
	tHalted = 1 << 6
	tBufErr = 1 << 5
	tBabble = 1 << 4
	tXact   = 1 << 3
	tIOC    = 1 << 15
	tDT     = 1 << 31

	qhDTC  = 1 << 14
	qhHead = 1 << 15

	linkT    = 1
	linkMask = ^uint32(0x1f)

	minPortReset = 50 * time.Millisecond // USB 2.0 §7.1.7.5 TDRSTR for a root port
)

// Config shapes the model.
type Config struct {
	// Ports is the number of root ports (1..15, default 1).
	Ports int
	// Companions is HCSPARAMS N_CC: 1 on the AR7161 (its OHCI), 0 on
	// the integrated-TT cores and on QEMU's ICH9 EHCI without one.
	Companions int
	// IntegratedTT models a ChipIdea/TDI core: idle until USBMODE says
	// host, PORTSC PSPD, full/low-speed devices on the root ports.
	IntegratedTT bool
	// CapLength is where the operational registers start (default 0x20;
	// 0x40 on ChipIdea cores).
	CapLength uint32
	// RegOrder is the byte order of the register block as 8/16-bit
	// accesses see it (big-endian MMIO on the AR71xx family).
	RegOrder barrier.Order
	// DescOrder is the byte order of descriptors in memory.
	DescOrder barrier.Order
	// Line is the interrupt line on the hwsim controller.
	Line int
	// SynopsysIAABug models the AR71xx core's defect (Linux
	// has_synopsys_hc_bug): after answering the async-advance doorbell
	// the engine still holds the qH it was about to visit, even if that
	// qH was unlinked, until ASYNCLISTADDR is written again.
	SynopsysIAABug bool
}

// Stats are the model's counters (read with the System lock, e.g. in Do).
type Stats struct {
	Transactions, NAKs, Stalls, Babbles, XactErrs uint64
	Retransmissions                               uint64 // IN packets with the wrong toggle, discarded
	Fetched, Retired, ShortPackets                uint64
	Doorbells                                     uint64
	LateWritebacks                                uint64 // qTD tokens written after the overlay moved on
}

type port struct {
	sc      uint32
	fn      usbsim.Function
	resetAt time.Time
}

// fetched is what the model read from a qTD when it took it.
type fetched struct {
	qtd  uint32
	bufs [5]uint32
}

// writeback is a retired qTD's token not yet in memory.
type writeback struct {
	qh, qtd, token uint32
	bufs           [5]uint32
	irq            uint32 // status bits raised when it lands
}

// Controller is the model.
type Controller struct {
	sys *hwsim.System
	ctl *hwsim.Controller
	cfg Config

	cmd, sts, intr, frindex uint32
	perBase, asyncBase      uint32
	configFlag, usbMode     uint32
	ports                   []port

	cur      uint32               // the async qH the engine is at (0: start from ASYNCLISTADDR)
	held     map[uint32][2]uint32 // visited qHs' endpoint words, until a doorbell lets go
	doorbell int                  // steps until the doorbell is answered; -1 none
	fetches  map[uint32]fetched
	pending  []writeback
	buf      [1024]byte
	Stats    Stats
}

// New returns a controller in its reset state.
func New(sys *hwsim.System, ctl *hwsim.Controller, cfg Config) *Controller {
	if cfg.Ports <= 0 {
		cfg.Ports = 1
	}
	if cfg.Ports > 15 {
		cfg.Ports = 15
	}
	if cfg.CapLength == 0 {
		cfg.CapLength = 0x20
	}
	c := &Controller{sys: sys, ctl: ctl, cfg: cfg, ports: make([]port, cfg.Ports),
		doorbell: -1, fetches: map[uint32]fetched{}, held: map[uint32][2]uint32{}}
	c.hcReset()
	sys.Sched.AddAgent("ehci", c.step)
	return c
}

// Map puts the capability and operational registers on the bus.
func (c *Controller) Map(name string) *hwsim.Region { return c.sys.Bus.Map(name, 0x200, c) }

func (c *Controller) misuse(format string, a ...any) {
	c.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Region: "ehcisim", Detail: fmt.Sprintf(format, a...)})
}

func (c *Controller) hcReset() {
	c.cmd = 8 << 16 // ITC default: 8 microframes
	c.sts = sHalted
	c.intr, c.frindex, c.perBase, c.asyncBase, c.configFlag, c.usbMode = 0, 0, 0, 0, 0, 0
	for i := range c.ports {
		p := &c.ports[i]
		keep := p.sc & pCCS
		p.sc = keep
		if keep != 0 {
			p.sc |= pCSC | c.lineState(p.fn)
		}
		if c.cfg.Companions > 0 {
			p.sc |= pPO // CONFIGFLAG 0: every port is the companion's
		}
	}
	c.cur, c.doorbell = 0, -1
	clear(c.held)
	clear(c.fetches)
	c.pending = c.pending[:0]
	c.irq()
}

func (c *Controller) lineState(fn usbsim.Function) uint32 {
	if fn == nil {
		return 0
	}
	if fn.Speed() == usb.SpeedLow {
		return pLSK
	}
	return pLSJ
}

// Attach plugs f into port (1-based). Takes the lock.
func (c *Controller) Attach(portNum int, f usbsim.Function) {
	c.sys.Do(func() {
		p := &c.ports[portNum-1]
		p.fn = f
		p.sc = p.sc&^(pLS|pPE|pSpeed) | pCCS | pCSC | c.lineState(f)
		c.sts |= sPCD
		c.irq()
	})
}

// Detach unplugs the device on port: every later transaction to it goes
// unanswered. Takes the lock.
func (c *Controller) Detach(portNum int) {
	c.sys.Do(func() {
		p := &c.ports[portNum-1]
		p.fn = nil
		if p.sc&pPE != 0 {
			p.sc |= pPEC
		}
		p.sc = p.sc&^(pCCS|pPE|pLS|pSpeed) | pCSC
		c.sts |= sPCD
		c.irq()
	})
}

// Pump runs the engine from its own goroutine until stop is closed.
func (c *Controller) Pump(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		c.sys.Sched.Settle(64)
		time.Sleep(20 * time.Microsecond)
	}
}

func (c *Controller) running() bool { return c.sts&sHalted == 0 }

// ReadReg implements hwsim.Device.
func (c *Controller) ReadReg(off uint32, width int) uint32 {
	w := c.word(off &^ 3)
	if width == 4 {
		return w
	}
	if off >= c.cfg.CapLength {
		c.misuse("%d-byte read of operational register %#x", width, off)
	}
	lane := off & 3
	var shift uint32
	if c.big() {
		shift = (4 - uint32(width) - lane) * 8
	} else {
		shift = lane * 8
	}
	return w >> shift & (1<<(8*width) - 1)
}

func (c *Controller) big() bool {
	return c.cfg.RegOrder == barrier.BigEndian || (c.cfg.RegOrder == barrier.Native && c.sys.Config().BigEndianCPU)
}

func (c *Controller) word(off uint32) uint32 {
	switch off {
	case 0x00:
		return hciVersion<<16 | c.cfg.CapLength
	case 0x04:
		return uint32(len(c.ports)) | 1<<4 | uint32(len(c.ports))<<8 | uint32(c.cfg.Companions)<<12
	case 0x08:
		return 0 // 32-bit addressing, programmable nothing
	}
	if off < c.cfg.CapLength {
		return 0
	}
	o := off - c.cfg.CapLength
	switch {
	case o == oCmd:
		return c.cmd
	case o == oSts:
		v := c.sts
		if c.running() && c.cmd&cPSE != 0 {
			v |= sPSS
		}
		if c.running() && c.cmd&cASE != 0 {
			v |= sASS
		}
		return v
	case o == oIntr:
		return c.intr
	case o == oFrIdx:
		return c.frindex
	case o == oPer:
		return c.perBase
	case o == oAsync:
		return c.asyncBase
	case o == oCfg:
		return c.configFlag
	case o == oUSBMod && c.cfg.IntegratedTT:
		return c.usbMode
	case o >= oPort && o < oPort+4*uint32(len(c.ports)):
		return c.ports[(o-oPort)/4].sc
	}
	return 0
}

// WriteReg implements hwsim.Device.
func (c *Controller) WriteReg(off uint32, width int, v uint32) {
	if width != 4 {
		c.misuse("%d-byte write at %#x: EHCI registers are written as words", width, off)
		return
	}
	if off < c.cfg.CapLength {
		c.misuse("write to capability register %#x", off)
		return
	}
	o := off - c.cfg.CapLength
	switch {
	case o == oCmd:
		c.writeCmd(v)
	case o == oSts:
		c.sts &^= v & 0x3f
	case o == oIntr:
		c.intr = v & 0x3f
	case o == oFrIdx:
		if c.running() {
			c.misuse("FRINDEX written while the controller runs")
		}
		c.frindex = v & 0x3fff
	case o == oSeg:
		if v != 0 {
			c.misuse("CTRLDSSEGMENT %#x on a controller without 64-bit addressing", v)
		}
	case o == oPer:
		if v&0xfff != 0 {
			c.misuse("PERIODICLISTBASE %#x not 4 KiB aligned", v)
		}
		c.perBase = v &^ 0xfff
	case o == oAsync:
		if v&0x1f != 0 {
			c.misuse("ASYNCLISTADDR %#x not 32-byte aligned", v)
		}
		c.asyncBase = v & linkMask
		// The next qH to run is the one written: whatever the engine
		// held is dropped.
		c.cur = 0
		for a := range c.held {
			if !c.reachable(a) {
				delete(c.held, a)
			}
		}
	case o == oCfg:
		c.writeConfigFlag(v & 1)
	case o == oUSBMod && c.cfg.IntegratedTT:
		c.usbMode = v & 0x3f
	case o >= oPort && o < oPort+4*uint32(len(c.ports)):
		c.writePort(int((o-oPort)/4), v)
	}
	c.irq()
}

func (c *Controller) writeCmd(v uint32) {
	if v&cReset != 0 {
		if c.running() {
			c.misuse("HCRESET while the controller runs (EHCI §2.3.1: halt first)")
		}
		c.hcReset()
		return
	}
	if v&cIAAD != 0 && c.cmd&cIAAD == 0 {
		c.Stats.Doorbells++
		if !c.running() || c.cmd&cASE == 0 {
			c.misuse("async-advance doorbell rung with the async schedule off")
		}
		c.doorbell = 1 + c.sys.Sched.Intn(3)
	}
	if v&cRun != 0 && !c.running() {
		switch {
		case c.cfg.IntegratedTT && c.usbMode&3 != 3:
			c.misuse("Run set on a ChipIdea core still in idle mode (USBMODE CM %d, not host)", c.usbMode&3)
			v &^= cRun
		case c.asyncBase == 0 && v&cASE != 0:
			c.misuse("async schedule enabled with ASYNCLISTADDR 0")
		}
	}
	iaad := c.cmd & cIAAD
	c.cmd = v&^cIAAD | iaad | v&cIAAD
	if c.cmd&cRun != 0 {
		c.sts &^= sHalted
	} else {
		c.sts |= sHalted
		c.cur = 0
	}
}

func (c *Controller) writeConfigFlag(v uint32) {
	if v == c.configFlag {
		return
	}
	c.configFlag = v
	for i := range c.ports {
		p := &c.ports[i]
		if v == 1 {
			p.sc &^= pPO // every port routed to EHCI (§4.2)
			if p.fn != nil {
				p.sc |= pCCS | pCSC | c.lineState(p.fn)
			}
		} else if c.cfg.Companions > 0 {
			p.sc = p.sc&^(pPE|pCCS) | pPO
		}
	}
	c.sts |= sPCD
}

func (c *Controller) writePort(i int, v uint32) {
	p := &c.ports[i]
	old := p.sc
	p.sc &^= v & (pCSC | pPEC | pOCC)
	if v&pPE == 0 {
		p.sc &^= pPE
	} else if old&pPE == 0 {
		c.misuse("port %d: software set PE (only a reset enables a port)", i+1)
	}
	p.sc = p.sc&^pPP | v&pPP
	if v&pPO != 0 && old&pPO == 0 {
		if c.cfg.Companions == 0 {
			c.misuse("port %d handed to a companion controller that does not exist", i+1)
		}
		p.sc = p.sc&^(pPE|pCCS) | pPO
	}
	switch {
	case v&pPR != 0 && old&pPR == 0:
		if old&pPO != 0 {
			c.misuse("port %d reset while owned by the companion", i+1)
		}
		p.sc = p.sc&^pPE | pPR
		p.resetAt = time.Now()
	case v&pPR == 0 && old&pPR != 0:
		if d := time.Since(p.resetAt); d < minPortReset {
			c.misuse("port %d reset held %v (USB 2.0 §7.1.7.5: 50 ms on a root port)", i+1, d)
		}
		p.sc &^= pPR
		c.endReset(p)
	}
}

// endReset finishes a port reset: a high-speed device chirped and the
// port enables; without an integrated TT a full/low-speed one leaves it
// disabled for the companion (EHCI §4.2.2).
func (c *Controller) endReset(p *port) {
	if p.fn == nil || p.sc&pCCS == 0 {
		return
	}
	p.fn.Reset()
	sp := p.fn.Speed()
	p.sc &^= pSpeed | pLS
	switch {
	case sp == usb.SpeedHigh:
		p.sc |= pPE
		if c.cfg.IntegratedTT {
			p.sc |= 2 << 26
		}
	case c.cfg.IntegratedTT:
		p.sc |= pPE
		if sp == usb.SpeedLow {
			p.sc |= 1 << 26
		}
	default:
		p.sc |= c.lineState(p.fn)
	}
}

func (c *Controller) irq() {
	if c.ctl == nil {
		return
	}
	if c.sts&c.intr&0x3f != 0 {
		c.ctl.Raise(c.cfg.Line)
	} else {
		c.ctl.Lower(c.cfg.Line)
	}
}

func (c *Controller) ld(addr uint32) (uint32, bool) {
	v, err := c.sys.Mem.DevLoad32(uint64(addr), c.cfg.DescOrder)
	if err != nil {
		c.hostError()
		return 0, false
	}
	return v, true
}

func (c *Controller) st(addr, v uint32) {
	if c.sys.Mem.DevStore32(uint64(addr), v, c.cfg.DescOrder) != nil {
		c.hostError()
	}
}

// hostError is a DMA failure: the controller halts with HSE (§4.15.2.4).
func (c *Controller) hostError() {
	c.sts |= sHSE | sHalted
	c.cmd &^= cRun
}
