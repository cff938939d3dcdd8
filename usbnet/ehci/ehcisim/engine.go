package ehcisim

import (
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// Queue head and qTD offsets (EHCI §3.5, §3.6).
const (
	qhLink    = 0x00
	qhChar    = 0x04
	qhCaps    = 0x08
	qhCur     = 0x0c
	qhOvl     = 0x10
	tdNext    = 0x00
	tdAlt     = 0x04
	tdToken   = 0x08
	tdBuf     = 0x0c
	maxWalk   = 64 // links followed per walk before the model calls it a loop
	asyncHops = 16 // qH visits per microframe, at most
)

// step is one microframe of the controller.
func (c *Controller) step() bool {
	if !c.running() {
		return false
	}
	progress := false
	if c.cmd&cPSE != 0 && c.periodicWalk() {
		progress = true
	}
	if c.cmd&cASE != 0 {
		// A microframe holds about a dozen 512-byte packets at 480 Mb/s:
		// the engine visits up to asyncHops qHs, and stops early after
		// a whole pass of the ring (head to head) found nothing to do.
		idleSince := c.cur
		for i := 0; i < asyncHops && c.running(); i++ {
			if c.asyncVisit() {
				progress = true
				idleSince = c.cur
			} else if c.cur == idleSince && i > 0 {
				break
			}
		}
	}
	// Late write-backs land in a seeded order across qHs; one qH's land
	// in retirement order, as one engine retires them.
	if n := len(c.pending); n > 0 && c.sys.Sched.Chance(128) {
		i := c.sys.Sched.Intn(n)
		for j := 0; j < i; j++ {
			if c.pending[j].qh == c.pending[i].qh {
				i = j
				break
			}
		}
		c.land(i)
		progress = true
	}
	if c.doorbell >= 0 {
		if c.doorbell == 0 {
			c.answerDoorbell()
			progress = true
		} else {
			c.doorbell--
		}
	}
	c.frindex = (c.frindex + 1) & 0x3fff
	if c.frindex&7 == 0 {
		for len(c.pending) > 0 {
			c.land(0) // a frame never ends with a write-back outstanding
		}
		if c.frindex&0x1fff == 0 {
			c.sts |= sFLR
		}
	}
	c.irq()
	return progress
}

// land writes pending write-back i to memory and raises its interrupt.
func (c *Controller) land(i int) {
	w := c.pending[i]
	c.pending = append(c.pending[:i], c.pending[i+1:]...)
	var now [5]uint32
	for k := range now {
		now[k], _ = c.ld(w.qtd + tdBuf + uint32(4*k))
	}
	if now != w.bufs {
		c.misuse("qTD at %#x was rewritten before the controller wrote its token back (freed or reused while still the controller's)", w.qtd)
	}
	c.st(w.qtd+tdToken, w.token)
	c.sts |= w.irq
}

// answerDoorbell: every cached qH pointer is dropped, every write-back is
// in memory, and IAA is raised (EHCI §4.8.2).
func (c *Controller) answerDoorbell() {
	for len(c.pending) > 0 {
		c.land(0)
	}
	c.doorbell = -1
	c.cmd &^= cIAAD
	c.sts |= sIAA
	for a := range c.fetches {
		if !c.reachable(a) {
			delete(c.fetches, a)
		}
	}
	if c.cfg.SynopsysIAABug {
		// The defect: the answer comes, but the engine lets go of
		// nothing; only a write of ASYNCLISTADDR makes it start afresh.
		return
	}
	if c.cur != 0 && !c.reachable(c.cur) {
		c.cur = 0
	}
	for a := range c.held {
		if !c.reachable(a) {
			delete(c.held, a)
		}
	}
}

// reachable reports whether the async ring from ASYNCLISTADDR contains qh.
func (c *Controller) reachable(qh uint32) bool {
	a := c.asyncBase
	for i := 0; i < maxWalk && a != 0; i++ {
		if a == qh {
			return true
		}
		l, ok := c.ld(a + qhLink)
		if !ok || l&linkT != 0 {
			return false
		}
		a = l & linkMask
		if a == c.asyncBase {
			return false
		}
	}
	return false
}

// asyncVisit visits the qH the engine holds and moves on along its link.
//
// The engine keeps what it read of every qH it visited (their endpoint
// words) until a doorbell answer lets go of those no longer linked: EHCI
// §4.8.2 allows a controller to hold any of them until then. A driver
// changes those words only for a qH it unlinked and the engine let go
// of; finding them changed on a later visit means the qH was reused
// while the engine still held it.
func (c *Controller) asyncVisit() bool {
	if c.asyncBase == 0 {
		return false
	}
	if c.cur == 0 {
		c.cur = c.asyncBase
	}
	a := c.cur
	var now [2]uint32
	now[0], _ = c.ld(a + qhChar)
	now[1], _ = c.ld(a + qhCaps)
	if was, ok := c.held[a]; ok && was != now {
		why := "unlinked and reused without waiting for the async-advance doorbell"
		if c.cfg.SynopsysIAABug {
			why += " (on this core: or without rewriting ASYNCLISTADDR after its answer)"
		}
		c.misuse("qH at %#x rewritten (endpoint %#x -> %#x) while the controller still held it: %s", a, was[0], now[0], why)
	}
	c.held[a] = now
	progress := c.visit(a)
	if !c.running() {
		return progress
	}
	if c.sys.Sched.Chance(64) {
		return progress // stays on this qH a little longer
	}
	l, ok := c.ld(a + qhLink)
	if !ok {
		return progress
	}
	if l&linkT != 0 || l&6 != 2 {
		c.misuse("async qH at %#x links to %#x: the ring must be closed and hold only qHs", a, l)
		c.cur = 0
		return progress
	}
	c.cur = l & linkMask
	return progress
}

// periodicWalk runs this microframe's frame list entry: every interrupt
// qH reached whose S-mask names the microframe gets one visit.
func (c *Controller) periodicWalk() bool {
	if c.perBase == 0 {
		return false
	}
	frame := c.frindex >> 3 & 1023
	uf := c.frindex & 7
	l, ok := c.ld(c.perBase + 4*frame)
	progress := false
	for i := 0; ok && l&linkT == 0; i++ {
		if i == maxWalk {
			c.misuse("periodic schedule of frame %d does not end within %d links", frame, maxWalk)
			return progress
		}
		if l&6 != 2 {
			c.misuse("periodic link %#x is not a qH (iTD/siTD/FSTN are not modelled)", l)
			return progress
		}
		a := l & linkMask
		caps, _ := c.ld(a + qhCaps)
		if caps&0xff == 0 {
			c.misuse("interrupt qH at %#x has an empty S-mask: it would never run", a)
		} else if caps>>uf&1 != 0 && c.visit(a) {
			progress = true
		}
		l, ok = c.ld(a + qhLink)
	}
	return progress
}

// visit works on one qH: if its overlay is active, one transaction; if
// not, it takes the next qTD when that is active.
func (c *Controller) visit(a uint32) bool {
	tok, ok := c.ld(a + qhOvl + tdToken)
	if !ok || tok&tHalted != 0 {
		return false
	}
	if tok&tActive != 0 {
		return c.transact(a)
	}
	next, _ := c.ld(a + qhOvl + tdNext)
	if next&linkT != 0 {
		return false
	}
	next &= linkMask
	ttok, ok := c.ld(next + tdToken)
	if !ok || ttok&tActive == 0 {
		return false
	}
	// Fetch: the qTD's words into the overlay (§4.10.2). DTC=0 keeps the
	// toggle in the overlay.
	var f fetched
	f.qtd = next
	nnext, _ := c.ld(next + tdNext)
	alt, _ := c.ld(next + tdAlt)
	for k := range f.bufs {
		f.bufs[k], _ = c.ld(next + tdBuf + uint32(4*k))
	}
	char, _ := c.ld(a + qhChar)
	if char&qhDTC == 0 {
		ttok = ttok&^tDT | tok&tDT
	}
	if pid := ttok >> 8 & 3; pid == 3 {
		c.misuse("qTD at %#x: reserved PID 3", next)
	}
	if n := ttok >> 16 & 0x7fff; n > 5*4096-(f.bufs[0]&0xfff) {
		c.misuse("qTD at %#x: %d bytes do not fit its five pages", next, n)
	}
	c.fetches[a] = f
	c.Stats.Fetched++
	c.st(a+qhCur, next)
	c.st(a+qhOvl+tdNext, nnext)
	c.st(a+qhOvl+tdAlt, alt)
	for k, b := range f.bufs {
		c.st(a+qhOvl+tdBuf+uint32(4*k), b)
	}
	c.st(a+qhOvl+tdToken, ttok&^(tHalted|tBabble|tBufErr|tXact))
	return true
}

// fn returns the function that answers addr on an enabled EHCI port.
func (c *Controller) fn(addr uint8, speed usb.Speed, hubPort uint32) (usbsim.Function, int) {
	for i := range c.ports {
		p := &c.ports[i]
		if p.fn == nil || p.sc&(pPE|pPO) != pPE {
			continue
		}
		return p.fn, i + 1
	}
	return nil, 0
}

// transact runs one transaction of qH a's active overlay.
func (c *Controller) transact(a uint32) bool {
	char, _ := c.ld(a + qhChar)
	caps, _ := c.ld(a + qhCaps)
	tok, _ := c.ld(a + qhOvl + tdToken)
	var bufs [5]uint32
	for k := range bufs {
		bufs[k], _ = c.ld(a + qhOvl + tdBuf + uint32(4*k))
	}
	addr := uint8(char & 0x7f)
	ep := uint8(char >> 8 & 0xf)
	eps := char >> 12 & 3
	maxp := int(char >> 16 & 0x7ff)
	pid := tok >> 8 & 3
	left := int(tok >> 16 & 0x7fff)
	dt := uint8(tok >> 31)
	cpage := tok >> 12 & 7
	off := bufs[0] & 0xfff
	if maxp == 0 || maxp > 1024 {
		c.misuse("qH at %#x: max packet %d", a, maxp)
		return c.retire(a, tok&^tActive|tHalted|tBufErr, bufs)
	}

	speed := [4]usb.Speed{usb.SpeedFull, usb.SpeedLow, usb.SpeedHigh, usb.SpeedUnknown}[eps]
	f, portNum := c.fn(addr, speed, caps>>23&0x7f)
	h := usbsim.NoResponse
	n := 0
	if f != nil {
		if fs := f.Speed(); fs != speed {
			c.misuse("qH at %#x: endpoint speed %v, device on port %d is %v-speed", a, speed, portNum, fs)
			f = nil
		} else if speed != usb.SpeedHigh {
			if !c.cfg.IntegratedTT {
				c.misuse("qH at %#x: split transaction with no transaction translator", a)
			} else if hub, hp := caps>>16&0x7f, caps>>23&0x7f; hub != 0 || int(hp) != portNum {
				c.misuse("qH at %#x: root-port TT needs hub address 0 and port %d, got hub %d port %d", a, portNum, hub, hp)
			}
		}
	}
	if cpage > 4 {
		c.misuse("qH at %#x: current page %d past the qTD's five", a, cpage)
		return c.retire(a, tok&^tActive|tHalted|tBufErr, bufs)
	}
	c.Stats.Transactions++
	switch pid {
	case 2: // SETUP
		if left != 8 {
			c.misuse("SETUP qTD of %d bytes (must be 8)", left)
		}
		var pkt [8]byte
		if !c.dma(false, bufs, cpage, off, pkt[:]) {
			return c.retire(a, tok&^tActive|tHalted|tBufErr, bufs)
		}
		if f != nil {
			h = f.Setup(addr, pkt)
		}
		n = 8
	case 0: // OUT
		n = min(maxp, left)
		data := c.buf[:n]
		if !c.dma(false, bufs, cpage, off, data) {
			return c.retire(a, tok&^tActive|tHalted|tBufErr, bufs)
		}
		if f != nil {
			h = f.Out(addr, ep, dt, data)
		}
	case 1: // IN
		var got int
		var tog uint8
		if f != nil {
			got, tog, h = f.In(addr, ep, c.buf[:maxp])
		}
		if h == usbsim.ACK {
			if tog != dt {
				c.Stats.Retransmissions++
				return true // the host ACKs and drops it; the toggle stays
			}
			if got > left {
				c.Stats.Babbles++
				return c.retire(a, tok&^tActive|tHalted|tBabble, bufs)
			}
			if !c.dma(true, bufs, cpage, off, c.buf[:got]) {
				return c.retire(a, tok&^tActive|tHalted|tBufErr, bufs)
			}
		}
		n = got
	}
	switch h {
	case usbsim.NAK:
		c.Stats.NAKs++
		return false
	case usbsim.STALL:
		c.Stats.Stalls++
		return c.retire(a, tok&^tActive|tHalted, bufs)
	case usbsim.NoResponse:
		c.Stats.XactErrs++
		cerr := tok >> 10 & 3
		tok |= tXact
		if cerr != 0 {
			cerr--
			tok = tok&^(3<<10) | cerr<<10
			if cerr == 0 {
				return c.retire(a, tok&^tActive|tHalted, bufs)
			}
		}
		c.st(a+qhOvl+tdToken, tok)
		return true
	}
	// ACK: the packet moved.
	left -= n
	pos := off + uint32(n)
	cpage += pos >> 12
	off = pos & 0xfff
	bufs[0] = bufs[0]&^0xfff | off
	tok = tok&^(0x7fff<<16|7<<12|3<<10|tDT) | uint32(left)<<16 | cpage<<12 | 3<<10 | uint32(dt^1)<<31
	short := pid == 1 && n < maxp
	if left == 0 || short {
		if short && left > 0 {
			c.Stats.ShortPackets++
		}
		return c.retire(a, tok&^tActive, bufs)
	}
	c.st(a+qhOvl+tdBuf, bufs[0])
	c.st(a+qhOvl+tdToken, tok)
	return true
}

// dma moves data between the qTD's buffer (from page cpage, offset off)
// and the device: in means device to memory.
func (c *Controller) dma(in bool, bufs [5]uint32, cpage, off uint32, data []byte) bool {
	for len(data) > 0 {
		if cpage > 4 {
			c.misuse("packet runs past the qTD's fifth page")
			return false
		}
		room := int(4096 - off)
		k := min(room, len(data))
		addr := uint64(bufs[cpage]&^0xfff | off)
		var err error
		if in {
			err = c.sys.Mem.DevWrite(addr, data[:k])
		} else {
			err = c.sys.Mem.DevRead(addr, data[:k])
		}
		if err != nil {
			c.hostError()
			return false
		}
		data = data[k:]
		cpage++
		off = 0
	}
	return true
}

// retire ends the overlay's qTD with token tok: the overlay is written
// back at once (token last), the qTD's token later (see land).
func (c *Controller) retire(a, tok uint32, bufs [5]uint32) bool {
	c.Stats.Retired++
	cur, _ := c.ld(a + qhCur)
	f, ok := c.fetches[a]
	if ok && f.qtd == cur {
		var now [5]uint32
		for k := range now {
			now[k], _ = c.ld(cur + tdBuf + uint32(4*k))
		}
		if now != f.bufs {
			c.misuse("qTD at %#x changed while the controller ran it (activated half-written, or edited while queued)", cur)
		}
		delete(c.fetches, a)
	}
	left := tok >> 16 & 0x7fff
	pid := tok >> 8 & 3
	if pid == 1 && left > 0 && tok&tHalted == 0 {
		// Short packet: continue at the alternate next qTD (§4.10.2).
		if alt, _ := c.ld(a + qhOvl + tdAlt); alt&linkT == 0 {
			c.st(a+qhOvl+tdNext, alt)
		}
	}
	c.st(a+qhOvl+tdBuf, bufs[0])
	c.st(a+qhOvl+tdToken, tok)
	var irq uint32
	switch {
	case tok&tHalted != 0:
		irq = sErr
	case tok&tIOC != 0 || (pid == 1 && left > 0):
		irq = sInt
	}
	w := writeback{qh: a, qtd: cur, token: tok, irq: irq}
	for k := range w.bufs {
		w.bufs[k], _ = c.ld(cur + tdBuf + uint32(4*k))
	}
	c.pending = append(c.pending, w)
	c.Stats.LateWritebacks++
	return true
}
