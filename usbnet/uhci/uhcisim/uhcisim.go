// Package uhcisim is a hostile model of an Intel UHCI host controller
// (the PIIX4's USB function, as QEMU's hw/usb/hcd-uhci.c emulates it),
// written from the UHCI Design Guide rev 1.1 for testing the uhci driver on
// hwsim. USB devices (usbsim.Function) plug into its two root ports.
//
// Its frame walker is an hwsim agent: each step does one thing (fetch a
// frame-list entry, a QH or a TD and run its transaction, or write one
// word of a TD's status back), so it runs between any two driver stores
// under a seeded schedule. Hazards it reproduces:
//
//   - A TD or QH link the driver publishes before the TD is complete is
//     executed half-written: a token without a valid PID or with an
//     illegal length is a Host Controller Process Error (the controller
//     halts, as the Design Guide's consistency checks make it), a bad
//     buffer address is a DMA fault (hwsim reports it; the controller
//     halts with Host System Error). Both are reported as misuse.
//   - Transfer buffers live in hwsim's cached memory, so a missing
//     PREWRITE or PREREAD is caught by its cache model.
//   - Status is written back the way real hardware does it, in steps:
//     the actual-length field first holds garbage while the packet is in
//     flight, then the final length and status, and Active is cleared by
//     the last store. Write-backs of TDs of different QHs are finished in
//     a seeded order, not the order the QHs were walked, so a driver that
//     retires transfers across pipes in submission order stalls.
//   - Short packets (SPD stops the queue: the element pointer stays on the
//     TD, as in hcd-uhci.c), babble (the device sent more than MaxLen:
//     Babble and Stalled), STALL, and CRC/timeout: a device that does not
//     answer costs one C_ERR count per try, and after three the TD
//     retires with CRC/Timeout.
//   - A device vanishing mid-transfer (Unplug): the port reports the
//     disconnect and every token goes unanswered.
//   - A TD the driver rewrites while the controller is still executing it
//     (reused right after unlinking, before the frame number advanced) is
//     reported: the controller was still walking freed memory.
//
// The model keeps its own register facts and never imports the driver.
package uhcisim

import (
	"fmt"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// Registers and bits (UHCI Design Guide rev 1.1 §2.1), local so the model
// does not trust the driver's constants.
const (
	rCMD    = 0x00
	rSTS    = 0x02
	rINTR   = 0x04
	rFRNUM  = 0x06
	rFLBASE = 0x08
	rSOF    = 0x0c
	rPORT1  = 0x10
	rPORT2  = 0x12
	regSize = 0x20

	cmdRS      = 0x0001
	cmdHCRESET = 0x0002
	cmdGRESET  = 0x0004

	stsINT  = 0x0001
	stsERR  = 0x0002
	stsRD   = 0x0004
	stsHSE  = 0x0008
	stsHCPE = 0x0010
	stsHCH  = 0x0020

	ieTOCRC  = 0x0001
	ieResume = 0x0002
	ieIOC    = 0x0004
	ieSP     = 0x0008

	pCCS  = 0x0001
	pCSC  = 0x0002
	pPE   = 0x0004
	pPEC  = 0x0008
	pRes  = 0x0080 // reserved, reads as one
	pLSDA = 0x0100
	pPR   = 0x0200
	pSUSP = 0x1000

	lT  = 1
	lQ  = 2
	lVF = 4

	tActive = 1 << 23
	tStall  = 1 << 22
	tDBE    = 1 << 21
	tBabble = 1 << 20
	tNAK    = 1 << 19
	tCRCTO  = 1 << 18
	tIOC    = 1 << 24
	tLS     = 1 << 26
	tSPD    = 1 << 29
	tStatus = 0xff << 16

	pidSETUP = 0x2d
	pidIN    = 0x69
	pidOUT   = 0xe1
)

// Walker limits. A full-speed frame carries at most 1500 bytes; QEMU
// stops a frame's walk after 1280 (hcd-uhci.c frame_bytes_max). A walk
// that visits more links than maxVisits is a loop and ends the frame.
const (
	frameBytes = 1280
	maxVisits  = 512
	maxPending = 8
	// minReset is the shortest port reset a device must see (USB 2.0
	// §7.1.7.5 TDRST, 10 ms; root ports hold 50 ms).
	minReset = 10 * time.Millisecond
)

// Config shapes the model. The zero value is fully hostile.
type Config struct {
	Line int // interrupt line on the controller
	// InOrder writes TD status back in walk order, each TD whole (a
	// friendly controller, for benchmarks).
	InOrder bool
}

type port struct {
	fn      usbsim.Function
	sc      uint16
	resetAt time.Time
}

// pending is a TD write-back in progress.
type pending struct {
	td, qh  uint32
	w       [4]uint32 // the TD as fetched
	stage   int
	final   uint32 // control word with Active cleared (or the retry word)
	advance bool   // success in a QH: element <- the TD's link
	retry   bool   // still active (NAK-free retry): one store
	wrote   uint32 // the control word the model stored last
}

// Stats are the model's counters.
type Stats struct {
	Frames, Transactions, NAKs, Timeouts, Stalls, Babbles, Shorts, ToggleMismatch uint64
	ReusedTDs                                                                     uint64
}

// Controller is the model.
type Controller struct {
	sys *hwsim.System
	ctl *hwsim.Controller
	cfg Config

	cmd, sts, intr, frnum uint16
	flbase                uint32
	sof                   uint8
	port                  [2]port

	inFrame       bool
	link          uint32 // next link of the walk
	qh            uint32 // QH being served (0: none)
	qhHead        uint32
	visits, bytes int
	ioc, short    bool
	errint        bool

	pend  [maxPending]pending
	npend int

	inBuf [1023]byte
	io    [1023]byte

	stats Stats
}

// New returns a halted controller with empty ports.
func New(sys *hwsim.System, ctl *hwsim.Controller, cfg Config) *Controller {
	c := &Controller{sys: sys, ctl: ctl, cfg: cfg}
	c.reset()
	sys.Sched.AddAgent("uhci", c.step)
	return c
}

// Map puts the controller's I/O BAR on the bus.
func (c *Controller) Map(name string) *hwsim.Region { return c.sys.Bus.Map(name, regSize, c) }

func (c *Controller) reset() {
	c.cmd, c.sts, c.intr, c.frnum, c.flbase, c.sof = 0, stsHCH, 0, 0, 0, 64
	c.inFrame, c.npend = false, 0
	c.ioc, c.short, c.errint = false, false, false
	c.irq()
}

func (c *Controller) misuse(format string, a ...any) {
	c.sys.Report(hwsim.Misuse{Kind: hwsim.ModelRule, Region: "uhcisim", Detail: fmt.Sprintf(format, a...)})
}

// Plug attaches f to root port n (1 or 2): connect status and its change
// bit are set. Takes the lock.
func (c *Controller) Plug(n int, f usbsim.Function) {
	c.sys.Do(func() {
		p := &c.port[n-1]
		p.fn = f
		p.sc = p.sc&^(pPE|pLSDA) | pCCS | pCSC
		if f.Speed() == usb.SpeedLow {
			p.sc |= pLSDA
		}
	})
}

// Unplug removes the device on port n at once, in the middle of whatever
// it was doing: the port reports the disconnect and nothing answers
// tokens any more. Takes the lock.
func (c *Controller) Unplug(n int) {
	c.sys.Do(func() {
		p := &c.port[n-1]
		p.fn = nil
		if p.sc&pPE != 0 {
			p.sc |= pPEC
		}
		p.sc = p.sc&^(pCCS|pPE|pLSDA) | pCSC
	})
}

// Stats returns the model's counters. Takes the lock.
func (c *Controller) Stats() (s Stats) {
	c.sys.Do(func() { s = c.stats })
	return s
}

// FrameNumber is FRNUM. Takes the lock.
func (c *Controller) FrameNumber() (f uint16) {
	c.sys.Do(func() { f = c.frnum })
	return f
}

// Pump runs the controller from its own goroutine until stop is closed,
// as the hardware walks frames while the driver waits.
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

// ReadReg implements hwsim.Device.
func (c *Controller) ReadReg(off uint32, width int) uint32 {
	switch {
	case off == rCMD && width == 2:
		return uint32(c.cmd)
	case off == rSTS && width == 2:
		return uint32(c.sts)
	case off == rINTR && width == 2:
		return uint32(c.intr)
	case off == rFRNUM && width == 2:
		return uint32(c.frnum)
	case off == rFLBASE && width == 4:
		return c.flbase
	case off == rSOF && width == 1:
		return uint32(c.sof)
	case (off == rPORT1 || off == rPORT2) && width == 2:
		return uint32(c.port[(off-rPORT1)/2].sc | pRes)
	}
	c.misuse("read of %d bytes at %#x: no such register", width, off)
	return 0
}

// WriteReg implements hwsim.Device.
func (c *Controller) WriteReg(off uint32, width int, v uint32) {
	switch {
	case off == rCMD && width == 2:
		c.writeCmd(uint16(v))
	case off == rSTS && width == 2:
		c.sts &^= uint16(v) & (stsINT | stsERR | stsRD | stsHSE | stsHCPE)
		c.irq()
	case off == rINTR && width == 2:
		c.intr = uint16(v) & 0xf
		c.irq()
	case off == rFRNUM && width == 2:
		if c.sts&stsHCH == 0 {
			c.misuse("FRNUM written while the controller runs (Design Guide §2.1.4)")
		}
		c.frnum = uint16(v) & 0x7ff
	case off == rFLBASE && width == 4:
		c.flbase = v &^ 0xfff
	case off == rSOF && width == 1:
		c.sof = uint8(v) & 0x7f
	case (off == rPORT1 || off == rPORT2) && width == 2:
		c.writePort(&c.port[(off-rPORT1)/2], uint16(v))
	default:
		c.misuse("write of %d bytes at %#x: no such register", width, off)
	}
}

func (c *Controller) writeCmd(v uint16) {
	if v&cmdGRESET != 0 {
		c.reset()
		for i := range c.port {
			if c.port[i].fn != nil {
				c.port[i].fn.Reset()
			}
			c.port[i].sc &^= pPE
		}
		c.cmd = v
		return
	}
	if v&cmdHCRESET != 0 {
		c.reset()
		for i := range c.port {
			c.port[i].sc &^= pPE | pPR | pSUSP
		}
		return // self-clearing
	}
	if c.cmd&cmdRS == 0 && v&cmdRS != 0 {
		if c.flbase == 0 {
			c.misuse("run with no frame list")
		}
		c.sts &^= stsHCH
		c.inFrame = false
	}
	c.cmd = v
}

func (c *Controller) writePort(p *port, v uint16) {
	p.sc &^= v & (pCSC | pPEC)
	if v&pPR != 0 && p.sc&pPR == 0 {
		p.sc |= pPR
		p.sc &^= pPE
		p.resetAt = time.Now()
	} else if v&pPR == 0 && p.sc&pPR != 0 {
		p.sc &^= pPR
		if d := time.Since(p.resetAt); d < minReset {
			c.misuse("port reset held %v, shorter than USB 2.0 §7.1.7.5's 10 ms", d)
		}
		if p.fn != nil {
			p.fn.Reset()
		}
	}
	if v&pPE != 0 && p.sc&(pCCS|pPR) == pCCS {
		p.sc |= pPE
	} else if v&pPE == 0 {
		p.sc &^= pPE
	}
	p.sc = p.sc&^pSUSP | v&pSUSP
}

// irq drives the line from USBSTS and USBINTR.
func (c *Controller) irq() {
	if c.ctl == nil {
		return
	}
	on := c.sts&(stsHSE|stsHCPE) != 0 ||
		c.sts&stsINT != 0 && c.intr&(ieIOC|ieSP) != 0 ||
		c.sts&stsERR != 0 && c.intr&ieTOCRC != 0 ||
		c.sts&stsRD != 0 && c.intr&ieResume != 0
	if on {
		c.ctl.Raise(c.cfg.Line)
	} else {
		c.ctl.Lower(c.cfg.Line)
	}
}

func (c *Controller) load(addr uint32) (uint32, bool) {
	v, err := c.sys.Mem.DevLoad32(uint64(addr), barrier.LittleEndian)
	return v, err == nil
}

func (c *Controller) store(addr, v uint32) bool {
	return c.sys.Mem.DevStore32(uint64(addr), v, barrier.LittleEndian) == nil
}

// halt stops the controller on a schedule or bus error.
func (c *Controller) halt(sts uint16) {
	c.sts |= sts | stsHCH
	c.cmd &^= cmdRS
	c.inFrame, c.npend = false, 0
	c.irq()
}

// step is the frame walker: one write-back store or one walk action.
func (c *Controller) step() bool {
	if c.sts&stsHCH != 0 {
		return false
	}
	if c.npend > 0 && (!c.inFrame || c.cfg.InOrder || c.npend == maxPending || c.sys.Sched.Chance(128)) {
		c.flushOne()
		return true
	}
	if c.cmd&cmdRS == 0 && !c.inFrame {
		c.sts |= stsHCH // stops at a frame boundary, after every write-back
		return true
	}
	return c.walk()
}

// flushOne performs the next store of one pending write-back: in
// InOrder mode the oldest, else a seeded pick among the oldest pending
// TD of each QH (a QH's own write-backs stay in order).
func (c *Controller) flushOne() {
	i := 0
	if !c.cfg.InOrder {
		var cand [maxPending]int
		n := 0
		for j := 0; j < c.npend; j++ {
			first := true
			for k := 0; k < j; k++ {
				if c.pend[k].qh == c.pend[j].qh && c.pend[j].qh != 0 {
					first = false
					break
				}
			}
			if first {
				cand[n] = j
				n++
			}
		}
		i = cand[c.sys.Sched.Intn(n)]
	}
	p := &c.pend[i]
	done := c.writeBack(p)
	if done {
		copy(c.pend[i:c.npend], c.pend[i+1:c.npend])
		c.npend--
	}
}

// writeBack does one store of p and reports whether p is finished.
// Stages: 0 garbage length (Active still set), 1 final length and status
// (Active still set), 2 Active cleared, 3 the QH element advanced.
func (c *Controller) writeBack(p *pending) bool {
	ctrlAddr := p.td + 4
	if p.retry {
		c.checkTD(p)
		c.store(ctrlAddr, p.final)
		return true
	}
	stage := p.stage
	if c.cfg.InOrder && stage < 2 {
		stage = 2
	}
	switch stage {
	case 0:
		c.checkTD(p)
		p.wrote = p.w[1]&^0x7ff | uint32(c.sys.Sched.Intn(0x800))
		c.store(ctrlAddr, p.wrote)
		p.stage = 1
		return false
	case 1:
		c.checkTD(p)
		p.wrote = p.final | tActive
		c.store(ctrlAddr, p.wrote)
		p.stage = 2
		return false
	case 2:
		c.checkTD(p)
		c.store(ctrlAddr, p.final)
		p.stage = 3
		if p.advance {
			return false
		}
		return true
	}
	c.store(p.qh+4, p.w[0])
	return true
}

// checkTD reports a TD the driver changed while the controller was
// still executing it.
func (c *Controller) checkTD(p *pending) {
	want := p.w
	if p.stage > 0 && !p.retry {
		want[1] = p.wrote
	}
	for k := 0; k < 4; k++ {
		v, ok := c.load(p.td + uint32(4*k))
		if ok && v != want[k] {
			c.stats.ReusedTDs++
			c.misuse("TD %#x word %d changed from %#08x to %#08x while the controller was executing it in frame %d: the controller is still walking freed memory (reused before the frame number advanced?)",
				p.td, k, want[k], v, c.frnum)
			return
		}
	}
}

func (c *Controller) endFrame() {
	c.frnum = (c.frnum + 1) & 0x7ff
	c.stats.Frames++
	if c.ioc || c.short {
		c.sts |= stsINT
	}
	if c.errint {
		c.sts |= stsERR
	}
	c.ioc, c.short, c.errint = false, false, false
	c.inFrame = false
	c.irq()
}

// walk does one walk action.
func (c *Controller) walk() bool {
	if !c.inFrame {
		e, ok := c.load(c.flbase + uint32(c.frnum&0x3ff)*4)
		if !ok {
			c.halt(stsHSE)
			return true
		}
		c.inFrame, c.link, c.qh, c.visits, c.bytes = true, e, 0, 0, 0
		return true
	}
	if c.link&lT != 0 || c.visits >= maxVisits || c.bytes >= frameBytes {
		if c.qh != 0 && c.link&lT != 0 && c.visits < maxVisits && c.bytes < frameBytes {
			// The QH's element list ended: on along the QH's head.
			c.link, c.qh = c.qhHead, 0
			return true
		}
		if c.npend > 0 {
			c.flushOne()
			return true
		}
		c.endFrame()
		return true
	}
	c.visits++
	addr := c.link &^ 0xf
	if c.link&lQ != 0 {
		head, ok1 := c.load(addr)
		elem, ok2 := c.load(addr + 4)
		if !ok1 || !ok2 {
			c.halt(stsHSE)
			return true
		}
		if c.qh != 0 {
			c.misuse("QH %#x in the element list of QH %#x: not supported by the model", addr, c.qh)
		}
		c.qh, c.qhHead = addr, head
		if elem&lT != 0 || elem&lQ != 0 {
			c.link, c.qh = head, 0
			return true
		}
		c.link = elem
		return true
	}
	return c.td(addr)
}

// leave moves the walk on after a TD: along the QH's head when inside a
// QH, else to the TD's own link.
func (c *Controller) leave(tdLink uint32) {
	if c.qh != 0 {
		c.link, c.qh = c.qhHead, 0
		return
	}
	c.link = tdLink
}

// busy reports whether a TD at addr still has a write-back pending.
func (c *Controller) busy(addr uint32) bool {
	for i := 0; i < c.npend; i++ {
		if c.pend[i].td == addr {
			return true
		}
	}
	return false
}

// td fetches the TD at addr and runs its transaction.
func (c *Controller) td(addr uint32) bool {
	var w [4]uint32
	for k := range w {
		v, ok := c.load(addr + uint32(4*k))
		if !ok {
			c.halt(stsHSE)
			return true
		}
		w[k] = v
	}
	ctrl, token := w[1], w[2]
	if ctrl&tActive == 0 || c.busy(addr) {
		c.leave(w[0])
		return true
	}
	if c.npend == maxPending {
		c.flushOne()
		return true
	}
	pid := token & 0xff
	devAddr := uint8(token >> 8 & 0x7f)
	ep := uint8(token >> 15 & 0xf)
	tog := uint8(token >> 19 & 1)
	ml := int(token>>21) & 0x7ff
	maxLen := ml + 1
	if ml == 0x7ff {
		maxLen = 0
	}
	switch {
	case pid != pidIN && pid != pidOUT && pid != pidSETUP:
		c.misuse("TD %#x: token %#08x has no valid PID: executed half-written (Host Controller Process Error)", addr, token)
		c.halt(stsHCPE)
		return true
	case ml >= 0x500 && ml != 0x7ff:
		c.misuse("TD %#x: MaxLen field %#x is illegal (Design Guide §3.2.3; Host Controller Process Error)", addr, ml)
		c.halt(stsHCPE)
		return true
	case pid == pidSETUP && maxLen != 8:
		c.misuse("TD %#x: SETUP of %d bytes, not 8: executed half-written?", addr, maxLen)
	}
	if maxLen > len(c.io) {
		maxLen = len(c.io)
	}
	c.stats.Transactions++
	p := pending{td: addr, qh: c.qh, w: w}
	final := ctrl &^ (tActive | tStatus | 0x7ff)
	actual := 0
	var h usbsim.Handshake
	switch pid {
	case pidSETUP, pidOUT:
		if maxLen > 0 {
			if c.sys.Mem.DevRead(uint64(w[3]), c.io[:maxLen]) != nil {
				c.halt(stsHSE)
				return true
			}
		}
		h = usbsim.NoResponse
		for i := range c.port {
			pt := &c.port[i]
			if pt.fn == nil || pt.sc&pPE == 0 {
				continue
			}
			if pid == pidSETUP {
				var pkt [8]byte
				copy(pkt[:], c.io[:8])
				h = pt.fn.Setup(devAddr, pkt)
			} else {
				h = pt.fn.Out(devAddr, ep, tog, c.io[:maxLen])
			}
			if h != usbsim.NoResponse {
				break
			}
		}
		actual = maxLen
	case pidIN:
		h = usbsim.NoResponse
		var n int
		var ptog uint8
		limit := len(c.inBuf)
		if ctrl&tLS != 0 {
			limit = 8
		}
		for i := range c.port {
			pt := &c.port[i]
			if pt.fn == nil || pt.sc&pPE == 0 {
				continue
			}
			n, ptog, h = pt.fn.In(devAddr, ep, c.inBuf[:limit])
			if h != usbsim.NoResponse {
				break
			}
		}
		if h == usbsim.ACK {
			if ptog != tog {
				// A retransmission: ACKed and discarded; the TD stays
				// active for the next packet.
				c.stats.ToggleMismatch++
				c.leave(w[0])
				return true
			}
			if n > maxLen {
				c.stats.Babbles++
				if maxLen > 0 {
					if c.sys.Mem.DevWrite(uint64(w[3]), c.inBuf[:maxLen]) != nil {
						c.halt(stsHSE)
						return true
					}
				}
				p.final = final | tBabble | tStall | uint32(maxLen-1)&0x7ff
				c.errint = true
				c.push(p)
				c.leave(w[0])
				return true
			}
			if n > 0 && c.sys.Mem.DevWrite(uint64(w[3]), c.inBuf[:n]) != nil {
				c.halt(stsHSE)
				return true
			}
			actual = n
		}
	}
	switch h {
	case usbsim.NAK:
		c.stats.NAKs++
		c.leave(w[0])
		return true
	case usbsim.STALL:
		c.stats.Stalls++
		p.final = final | tStall | 0x7ff
		c.errint = true
		c.push(p)
		c.leave(w[0])
		return true
	case usbsim.NoResponse:
		c.stats.Timeouts++
		cerr := ctrl >> 27 & 3
		switch cerr {
		case 1:
			p.final = final&^(3<<27) | tCRCTO | 0x7ff
			c.errint = true
		case 0:
			p.final, p.retry = ctrl|tCRCTO, true // no limit: retried forever
		default:
			p.final, p.retry = ctrl&^(3<<27)|(cerr-1)<<27, true
		}
		c.push(p)
		c.leave(w[0])
		return true
	}
	c.bytes += actual
	p.final = final | uint32(actual-1)&0x7ff
	if ctrl&tIOC != 0 {
		c.ioc = true
	}
	shortStop := pid == pidIN && actual < maxLen && ctrl&tSPD != 0
	if shortStop {
		// Short packet detect: retire the TD but leave the element on
		// it; the queue stops (hcd-uhci.c does the same).
		c.stats.Shorts++
		c.short = true
		c.push(p)
		c.leave(w[0])
		return true
	}
	p.advance = c.qh != 0
	c.push(p)
	if c.qh != 0 && (w[0]&lVF == 0 || w[0]&lT != 0) {
		c.link, c.qh = c.qhHead, 0
		return true
	}
	if c.qh != 0 && w[0]&lQ != 0 {
		c.misuse("TD %#x links to a QH inside QH %#x", addr, c.qh)
		c.link, c.qh = c.qhHead, 0
		return true
	}
	c.link = w[0]
	return true
}

func (c *Controller) push(p pending) {
	c.pend[c.npend] = p
	c.npend++
}
