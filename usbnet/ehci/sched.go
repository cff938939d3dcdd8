package ehci

import (
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// link puts p's qH into its schedule. Lock held.
//
// Async: the qH goes right after the head, its own link written (and
// ordered by a barrier) before the head's, so the controller never
// follows a pointer into a qH whose link is not yet valid. Periodic: see
// rebuildPeriodic.
func (p *pipe) link() {
	c := p.c
	if p.period > 0 {
		at := len(c.periodic)
		for i, o := range c.periodic {
			if o.period < p.period {
				at = i
				break
			}
		}
		c.periodic = append(c.periodic, nil)
		copy(c.periodic[at+1:], c.periodic[at:])
		c.periodic[at] = p
		c.rebuildPeriodic()
	} else {
		p.q.write(qhHLink, c.head.read(qhHLink))
		p.q.mem.Barrier()
		c.head.write(qhHLink, p.q.pa|linkTypeQH)
		c.head.mem.Barrier()
		c.async = append(c.async, nil)
		copy(c.async[1:], c.async)
		c.async[0] = p
	}
	p.linked = true
}

// unlink takes p's qH out of its schedule: its predecessor skips it. The
// qH's own link is left intact, so a controller that holds it walks on
// to the rest of the schedule; the caller waits (waitUnlinked) before
// touching the qH or its qTDs. Lock held.
func (p *pipe) unlink() {
	c := p.c
	p.linked = false
	if p.period > 0 {
		for i, o := range c.periodic {
			if o == p {
				c.periodic = append(c.periodic[:i], c.periodic[i+1:]...)
				break
			}
		}
		c.rebuildPeriodic()
		return
	}
	for i, o := range c.async {
		if o != p {
			continue
		}
		prev := c.head
		if i > 0 {
			prev = c.async[i-1].q
		}
		prev.write(qhHLink, p.q.read(qhHLink))
		prev.mem.Barrier()
		c.async = append(c.async[:i], c.async[i+1:]...)
		return
	}
}

// waitUnlinked waits until the controller can no longer hold p's
// unlinked qH: the async-advance doorbell for the asynchronous schedule,
// two frame starts for the periodic one.
func (p *pipe) waitUnlinked() error {
	c := p.c
	c.advMu.Lock()
	defer c.advMu.Unlock()
	if p.period > 0 {
		return c.frameAdvance()
	}
	return c.asyncAdvance()
}

// rebuildPeriodic rewrites the interrupt qHs' links (longest period
// first, each linking to the next) and the frame list: frame f starts at
// the first qH whose period divides f, and since periods are powers of
// two every qH after it is due in frame f too. Links are written from
// the end of the chain towards its start, each ordered by a barrier, so
// every pointer the controller can reach is valid. Lock held.
func (c *Controller) rebuildPeriodic() {
	for i := len(c.periodic) - 1; i >= 0; i-- {
		next := uint32(linkTerminate)
		if i+1 < len(c.periodic) {
			next = c.periodic[i+1].q.pa | linkTypeQH
		}
		q := c.periodic[i].q
		if q.read(qhHLink) != next {
			q.write(qhHLink, next)
			q.mem.Barrier()
		}
	}
	for f := 0; f < frameListLen; f++ {
		v := uint32(linkTerminate)
		for _, p := range c.periodic {
			if f%p.period == 0 {
				v = p.q.pa | linkTypeQH
				break
			}
		}
		if c.frameShadow[f] != v {
			c.frames.Write32(uint32(f*4), v)
			c.frameShadow[f] = v
		}
	}
	c.frames.Barrier()
}

// remove takes target (every queued transfer if nil) off p: unlink the
// qH, wait until the controller lets go of it, retire what completed
// meanwhile, cut the rest out of the qTD chain and, unless closing, put
// the qH back. Done runs for every transfer affected, in queue order,
// before remove returns. opMu held.
func (p *pipe) remove(target *xfer, closing bool) {
	c := p.c
	c.mu.Lock()
	if !closing && (len(p.queue) == 0 || (target != nil && !target.queued)) {
		c.mu.Unlock()
		return
	}
	if target == nil {
		p.aborting = true
		defer func() {
			c.mu.Lock()
			p.aborting = false
			c.mu.Unlock()
		}()
	}
	wasLinked := p.linked
	if wasLinked {
		p.unlink()
	}
	c.mu.Unlock()
	if wasLinked && !c.hz.skipAdvance() {
		// On a timeout the controller is stopped or dead; there is
		// nothing better to do than go on.
		_ = p.waitUnlinked()
	}

	c.svcMu.Lock() // Done calls stay in retirement order
	defer c.svcMu.Unlock()
	c.mu.Lock()
	out := p.spare
	n := p.scan(out, 0)
	done := n
	for len(p.queue) > 0 {
		x := p.queue[0]
		if target != nil {
			if !target.queued {
				break
			}
			x = target
		}
		p.cut(x)
		out[n] = x
		n++
		if target != nil {
			break
		}
	}
	if !closing && !c.dead {
		p.link()
	}
	c.mu.Unlock()
	c.giveBack(out[:done])
	c.giveBack(out[done:n])
}

// cut takes x out of p's stopped queue: every pointer to x's first qTD
// (the predecessor's next and alternate links, the overlay's) is moved
// to the place after x, and an overlay holding one of x's qTDs is
// emptied, keeping the data toggle. Lock held.
func (p *pipe) cut(x *xfer) {
	first := x.tds[0].pa
	idx := 0
	for i, o := range p.queue {
		if o == x {
			idx = i
			break
		}
	}
	if idx > 0 {
		y := p.queue[idx-1]
		for _, d := range y.tds {
			if d.read(tdNext) == first {
				d.write(tdNext, x.after)
			}
			if d.read(tdAlt) == first {
				d.write(tdAlt, x.after)
			}
		}
		y.after = x.after
	}
	q := p.q
	if x.owns(q.read(qhCurrent)) {
		// The overlay holds one of x's qTDs: empty it, keeping the
		// toggle, and go on after x.
		tok := q.read(qhOverlay + tdToken)
		q.write(qhOverlay+tdNext, x.after)
		q.write(qhOverlay+tdAlt, linkTerminate)
		q.write(qhOverlay+tdToken, tok&tokDT)
	} else {
		// The overlay holds the predecessor's qTD (or nothing): its
		// links into x now lead past it.
		if x.owns(q.read(qhOverlay + tdNext)) {
			q.write(qhOverlay+tdNext, x.after)
		}
		if x.owns(q.read(qhOverlay + tdAlt)) {
			q.write(qhOverlay+tdAlt, x.after)
		}
	}
	q.mem.Barrier()
	if x.t.Len > 0 {
		if x.dir == busdma.FromDevice || (x.dir == busdma.Bidirectional && x.t.Setup.In()) {
			_ = x.m.Sync(busdma.PostRead)
		} else {
			_ = x.m.Sync(busdma.PostWrite)
		}
	}
	p.free = append(p.free, x.tds...)
	clear(x.tds)
	x.tds = x.tds[:0]
	copy(p.queue[idx:], p.queue[idx+1:])
	p.queue[len(p.queue)-1] = nil
	p.queue = p.queue[:len(p.queue)-1]
	x.finish(0, usb.ErrCancelled)
	p.c.Stats.Cancelled.Add(1)
}

// owns reports whether pa is one of x's qTDs.
func (x *xfer) owns(pa uint32) bool {
	for _, d := range x.tds {
		if d.pa == pa {
			return true
		}
	}
	return false
}

// Cancel implements usb.Pipe.
func (p *pipe) Cancel(t *usb.Transfer) {
	x, ok := t.HC.(*xfer)
	if !ok || x.p != p {
		return
	}
	p.opMu.Lock()
	defer p.opMu.Unlock()
	p.remove(x, false)
}

// Abort implements usb.Pipe.
func (p *pipe) Abort() {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	p.remove(nil, false)
}

// ResetToggle implements usb.Pipe: the overlay's toggle goes to DATA0.
// With nothing queued the controller finds the qH idle (its next qTD
// inactive) and does not write the overlay back, so the store is safe.
func (p *pipe) ResetToggle() {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p.queue) != 0 || p.closed {
		return
	}
	p.q.write(qhOverlay+tdToken, p.q.read(qhOverlay+tdToken)&^tokDT)
	p.q.mem.Barrier()
}

// Close implements usb.Pipe: abort, unlink and wait, then the qH goes
// back to the controller's free list for the next OpenPipe.
func (p *pipe) Close() {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	c := p.c
	c.mu.Lock()
	if p.closed {
		c.mu.Unlock()
		return
	}
	p.closed = true
	c.mu.Unlock()
	p.remove(nil, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.pipes {
		if o == p {
			c.pipes = append(c.pipes[:i], c.pipes[i+1:]...)
			break
		}
	}
	for _, x := range p.xfers {
		_ = x.m.Unload()
	}
	c.freeQH = append(c.freeQH, p.q)
}
