package uhci

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// pipe is an open endpoint: a QH, the dummy TD its chain ends in, and
// its queue of submitted transfers.
type pipe struct {
	hc   *HC
	cfg  usb.PipeConfig
	skel int
	qh   uint16

	mu      sync.Mutex
	dummy   uint16 // the inactive TD the chain ends in
	toggle  uint32 // data toggle the next queued packet gets (bulk/interrupt)
	head    *xfer  // oldest submitted transfer
	tail    *xfer
	closed  bool
	offline bool // QH taken off the schedule (hc.mu for the lists)
	xfers   []*xfer

	tokenBase uint32 // address and endpoint fields of every token
	ctrlBase  uint32 // C_ERR, LS
	in        bool
}

// tdInfo is the software copy of one TD of a submission.
type tdInfo struct {
	token uint32
	ctrl  uint32
	buf   uint32
	mlen  int  // the packet's maximum length in bytes
	data  bool // a data-stage packet (counts toward Actual)
}

// xfer is the controller's state of one usb.Transfer (Transfer.HC).
type xfer struct {
	t   *usb.Transfer
	p   *pipe
	tds []uint16 // TD indices; tds[0] rotates with the pipe's dummy
	td  []tdInfo
	n   int // TDs in the current submission

	mem     []byte // cached memory: [setup line] + data
	memPA   uint32
	dataOff int
	m       *busdma.Map

	submitted bool
	in        bool // the data stage reads from the device
	pos       int  // first TD not yet seen retired
	actual    int
	skipFrom  int // control short read: TDs [skipFrom, skipTo) never ran
	skipTo    int
	next      *xfer
}

// OpenPipe implements usb.HostController.
func (hc *HC) OpenPipe(cfg usb.PipeConfig) (usb.Pipe, error) {
	switch {
	case cfg.Speed != usb.SpeedFull && cfg.Speed != usb.SpeedLow:
		return nil, fmt.Errorf("%w: %v speed on UHCI", ErrPipe, cfg.Speed)
	case cfg.Type == usb.Isochronous:
		return nil, fmt.Errorf("%w: isochronous", ErrPipe)
	case cfg.Address > 127 || cfg.Endpoint&0x70 != 0:
		return nil, fmt.Errorf("%w: address %d endpoint %#02x", ErrPipe, cfg.Address, cfg.Endpoint)
	case cfg.MaxPacket < 1 || cfg.MaxPacket > 1023:
		return nil, fmt.Errorf("%w: max packet %d", ErrPipe, cfg.MaxPacket)
	}
	p := &pipe{hc: hc, cfg: cfg, skel: skelAsync, in: cfg.In(),
		tokenBase: uint32(cfg.Address)<<tokenAddrShift | uint32(cfg.Endpoint&0x0f)<<tokenEPShift,
		ctrlBase:  ctrlCErr3}
	if hc.hz.noErrLimit() {
		p.ctrlBase = 0
	}
	if cfg.Speed == usb.SpeedLow {
		p.ctrlBase |= ctrlLS
	}
	if cfg.Type == usb.Interrupt {
		if cfg.Interval < 1 {
			return nil, fmt.Errorf("%w: interval %d", ErrPipe, cfg.Interval)
		}
		p.skel = intervalSkel(cfg.Interval)
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if !hc.running.Load() {
		return nil, usb.ErrGone
	}
	if len(hc.qhFree) == 0 || len(hc.tdFree) == 0 || len(hc.pipes) == cap(hc.pipes) {
		return nil, fmt.Errorf("%w: pipes", ErrNoSpace)
	}
	p.qh = hc.qhFree[len(hc.qhFree)-1]
	hc.qhFree = hc.qhFree[:len(hc.qhFree)-1]
	p.dummy = hc.tdFree[len(hc.tdFree)-1]
	hc.tdFree = hc.tdFree[:len(hc.tdFree)-1]
	// The dummy first, then the QH pointing at it, then the QH into
	// the chain (relink orders the last step with barriers).
	hc.tdMem.Write32(hc.tdOff(p.dummy)+tdCtrl, 0)
	hc.tdMem.Write32(hc.tdOff(p.dummy)+tdLink, linkT)
	hc.qhMem.Write32(hc.qhOff(p.qh)+qhElem, hc.tdPhys(p.dummy))
	hc.qhMem.Barrier()
	hc.qhHeadHW[p.qh] = 0
	hc.lists[p.skel] = append(hc.lists[p.skel], p)
	hc.pipes = append(hc.pipes, p)
	hc.relink()
	return p, nil
}

// Config implements usb.Pipe.
func (p *pipe) Config() usb.PipeConfig { return p.cfg }

// NewTransfer implements usb.Pipe.
func (p *pipe) NewTransfer(size int) (*usb.Transfer, error) {
	hc := p.hc
	if size < 0 || size > hc.cfg.MaxTransfer {
		return nil, fmt.Errorf("%w: %d bytes (max %d)", ErrLength, size, hc.cfg.MaxTransfer)
	}
	mp := p.cfg.MaxPacket
	packets := (size + mp - 1) / mp
	ntd := max(packets, 1) + 1 // data, and a zero-length packet or the spare
	setupLine := 0
	if p.cfg.Type == usb.Control {
		ntd = packets + 2 // SETUP, data, status
		setupLine = hc.line
	}
	memSize := roundUp(setupLine+size, hc.line)
	if memSize == 0 {
		memSize = hc.line
	}
	mem, pa, err := hc.cfg.DMA.AllocCached(hc.cfg.Name+"-xfer", memSize, hc.line)
	if err != nil {
		return nil, err
	}
	if pa+uint64(memSize) > 1<<32 {
		return nil, fmt.Errorf("%w: transfer buffer above 4 GiB", ErrConfig)
	}
	m, err := hc.tag.NewMap()
	if err != nil {
		return nil, err
	}
	if _, err := m.Load(mem[:memSize], busdma.Bidirectional); err != nil {
		return nil, err
	}
	x := &xfer{p: p, tds: make([]uint16, ntd), td: make([]tdInfo, ntd),
		mem: mem[:memSize], memPA: uint32(pa), dataOff: setupLine, m: m}
	hc.mu.Lock()
	if len(hc.tdFree) < ntd {
		hc.mu.Unlock()
		_ = m.Unload()
		return nil, fmt.Errorf("%w: %d TDs for a %d-byte transfer, %d free", ErrNoSpace, ntd, size, len(hc.tdFree))
	}
	copy(x.tds, hc.tdFree[len(hc.tdFree)-ntd:])
	hc.tdFree = hc.tdFree[:len(hc.tdFree)-ntd]
	hc.mu.Unlock()
	t := &usb.Transfer{Buf: mem[setupLine : setupLine+size : setupLine+size], Len: size, HC: x}
	x.t = t
	p.mu.Lock()
	p.xfers = append(p.xfers, x)
	p.mu.Unlock()
	return t, nil
}

func roundUp(x, a int) int { return (x + a - 1) &^ (a - 1) }

// build fills x.td for t's current request and returns the TD count.
func (p *pipe) build(x *xfer) (int, error) {
	t := x.t
	mp := p.cfg.MaxPacket
	n := 0
	add := func(pid uint32, toggle uint32, off, length int, data bool) {
		ml := uint32(maxLenNull)
		if length > 0 {
			ml = uint32(length - 1)
		}
		x.td[n] = tdInfo{
			token: pid | p.tokenBase | toggle<<19 | ml<<tokenLenShift,
			ctrl:  p.ctrlBase | ctrlActive,
			buf:   x.memPA + uint32(off),
			mlen:  length, data: data,
		}
		n++
	}
	x.skipFrom, x.skipTo = -1, -1
	if p.cfg.Type == usb.Control {
		if t.Len > int(t.Setup.Length) {
			return 0, fmt.Errorf("%w: %d data bytes for a request of %d", ErrLength, t.Len, t.Setup.Length)
		}
		x.in = t.Setup.In()
		add(pidSETUP, 0, 0, 8, false)
		dpid, spid := uint32(pidOUT), uint32(pidIN)
		if x.in {
			dpid, spid = pidIN, pidOUT
		}
		tg := uint32(1)
		for off := 0; off < t.Len; off += mp {
			add(dpid, tg, x.dataOff+off, min(mp, t.Len-off), true)
			tg ^= 1
		}
		if t.Len == 0 {
			spid = pidIN // no data stage: the status stage is IN (USB 2.0 §8.5.3)
		}
		add(spid, 1, x.dataOff, 0, false)
		for i := 1; i < n-2; i++ {
			if x.in {
				x.td[i].ctrl |= ctrlSPD
			}
		}
	} else {
		x.in = p.in
		pid := uint32(pidOUT)
		if x.in {
			pid = pidIN
		}
		tg := p.toggle
		for off := 0; off < t.Len; off += mp {
			add(pid, tg, x.dataOff+off, min(mp, t.Len-off), true)
			tg ^= 1
		}
		if t.Len == 0 || (!x.in && t.Flags&usb.ZeroLengthPacket != 0 && t.Len%mp == 0) {
			add(pid, tg, x.dataOff, 0, true)
			tg ^= 1
		}
		if x.in {
			for i := 0; i < n-1; i++ {
				x.td[i].ctrl |= ctrlSPD
			}
		}
		p.toggle = tg
	}
	x.td[n-1].ctrl |= ctrlIOC
	return n, nil
}

// Submit implements usb.Pipe.
func (p *pipe) Submit(t *usb.Transfer) error {
	x, ok := t.HC.(*xfer)
	if !ok || x.p != p {
		return ErrForeign
	}
	if t.Len < 0 || t.Len > len(t.Buf) || t.Done == nil {
		return ErrLength
	}
	hc := p.hc
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return usb.ErrClosed
	case !hc.running.Load():
		return usb.ErrGone
	case x.submitted:
		return usb.ErrBusy
	}
	saved := p.toggle
	n, err := p.build(x)
	if err != nil {
		p.toggle = saved
		return err
	}
	x.n, x.pos, x.actual = n, 0, 0
	t.Actual, t.Err = 0, nil
	// The buffer goes to the controller: setup packet and OUT data
	// written back, IN data's lines invalidated so no dirty line lands
	// on what the device writes.
	if p.cfg.Type == usb.Control {
		s := t.Setup.Bytes()
		copy(x.mem[:8], s[:])
		_ = x.m.SyncRange(busdma.PreWrite, 0, 8)
	}
	if t.Len > 0 {
		op := busdma.PreWrite
		if x.in {
			op = busdma.PreRead
		}
		_ = x.m.SyncRange(op, x.dataOff, t.Len)
	}
	// Rotate: the pipe's dummy becomes this transfer's first TD, the
	// transfer's spare becomes the new dummy.
	first, spare := p.dummy, x.tds[0]
	x.tds[0], p.dummy = first, spare
	td := hc.tdMem
	so := hc.tdOff(spare)
	td.Write32(so+tdCtrl, 0)
	td.Write32(so+tdLink, linkT)
	for i := n - 1; i >= 0; i-- {
		link := hc.tdPhys(spare) | linkVF
		if i < n-1 {
			link = hc.tdPhys(x.tds[i+1]) | linkVF
		}
		o := hc.tdOff(x.tds[i])
		if i == 0 && hc.hz.publishFirst() {
			td.Write32(o+tdCtrl, x.td[i].ctrl)
		}
		td.Write32(o+tdLink, link)
		td.Write32(o+tdToken, x.td[i].token)
		td.Write32(o+tdBuffer, x.td[i].buf)
		if i > 0 {
			td.Write32(o+tdCtrl, x.td[i].ctrl)
		}
	}
	// Everything behind the dummy is in memory before the dummy turns
	// active: the one store that hands the transfer over.
	td.Barrier()
	td.Write32(hc.tdOff(first)+tdCtrl, x.td[0].ctrl)
	td.Barrier()
	x.submitted = true
	x.next = nil
	if p.tail != nil {
		p.tail.next = x
	} else {
		p.head = x
	}
	p.tail = x
	return nil
}

// readCtrl loads a TD's control word: length and status come from the
// same load that showed Active clear.
func (p *pipe) readCtrl(i uint16) uint32 {
	o := p.hc.tdOff(i) + tdCtrl
	if p.hc.hz.lengthFirst() {
		early := p.hc.tdMem.Read32(o)
		c := p.hc.tdMem.Read32(o)
		return c&^ctrlActLen | early&ctrlActLen
	}
	return p.hc.tdMem.Read32(o)
}

// scan looks at x's TDs from x.pos on. It reports whether x is finished,
// whether the controller stopped the queue inside x (a short packet with
// SPD, or an error) so the pipe needs a restart, the toggle the next
// packet must carry after such a stop, and x's result.
func (p *pipe) scan(x *xfer) (fin, stopped bool, toggle uint32, err error) {
	for x.pos < x.n {
		if x.pos == x.skipFrom {
			x.pos = x.skipTo
		}
		i := x.pos
		c := p.readCtrl(x.tds[i])
		if c&ctrlActive != 0 {
			return false, false, 0, nil
		}
		info := &x.td[i]
		tg := info.token & tokenToggle >> 19
		if c&ctrlErrors != 0 {
			// The controller leaves the element on a failed TD.
			return true, true, tg, tdError(c)
		}
		got := int((c + 1) & ctrlActLen)
		if got > info.mlen {
			// The controller reports more than it was allowed to
			// write: count it as babble, never as data.
			return true, true, tg, usb.ErrBabble
		}
		if info.data {
			x.actual += got
		}
		if x.in && info.data && got < info.mlen {
			if p.cfg.Type == usb.Control {
				if info.ctrl&ctrlSPD != 0 {
					// Short data stage: the queue stopped here; go on
					// with the status stage.
					p.hc.Stats.Short.Add(1)
					x.skipFrom, x.skipTo = i+1, x.n-1
					x.pos = x.n - 1
					p.hc.qhMem.Write32(p.hc.qhOff(p.qh)+qhElem, p.hc.tdPhys(x.tds[x.n-1]))
					p.hc.qhMem.Barrier()
					continue
				}
			} else {
				p.hc.Stats.Short.Add(1)
				if x.t.Flags&usb.ShortOK == 0 {
					err = usb.ErrShort
				}
				return true, info.ctrl&ctrlSPD != 0, tg ^ 1, err
			}
		}
		x.pos++
	}
	return true, false, 0, nil
}

// tdError maps a retired TD's status bits to the core's errors. Babble
// comes first: the controller sets Stalled along with it.
func tdError(c uint32) error {
	switch {
	case c&ctrlBabble != 0:
		return usb.ErrBabble
	case c&ctrlDBE != 0:
		return usb.ErrDataBuffer
	case c&ctrlStalled != 0:
		return usb.ErrStall
	}
	return usb.ErrTransaction // CRC/timeout or bit stuffing, after C_ERR tries
}

// reap retires the finished transfers at the head of the queue into
// done. blocked reports that the head is still running.
func (p *pipe) reap(done *[reapBatch]*usb.Transfer) (n int, blocked bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.offline {
		return 0, false // Cancel is rearranging the queue
	}
	for p.head != nil && n < len(done) {
		x := p.head
		fin, stopped, tg, err := p.scan(x)
		if !fin {
			return n, true
		}
		p.retire(x, err)
		if stopped {
			p.restart(tg)
		}
		done[n] = x.t
		n++
	}
	return n, false
}

// retire takes the finished head x off the queue with its result.
func (p *pipe) retire(x *xfer, err error) {
	t := x.t
	t.Actual, t.Err = x.actual, err
	if x.in && x.actual > 0 {
		_ = x.m.SyncRange(busdma.PostRead, x.dataOff, x.actual)
	}
	switch {
	case err == nil:
		p.hc.Stats.Completed.Add(1)
	case err != usb.ErrShort:
		p.hc.Stats.Errors.Add(1)
	}
	x.submitted = false
	p.head = x.next
	if p.head == nil {
		p.tail = nil
	}
	x.next = nil
}

// restart points the QH's element at the head of the queue (or the
// dummy) after the controller stopped it on an inactive TD, with the data
// toggles of the queued transfers rewritten to start at tg.
func (p *pipe) restart(tg uint32) {
	hc := p.hc
	hc.Stats.Restarts.Add(1)
	if !hc.hz.noRetoggle() {
		p.retoggle(tg)
	}
	el := hc.tdPhys(p.dummy)
	if x := p.head; x != nil {
		el = hc.tdPhys(x.tds[x.pos])
	}
	hc.tdMem.Barrier()
	hc.qhMem.Write32(hc.qhOff(p.qh)+qhElem, el)
	hc.qhMem.Barrier()
}

// retoggle rewrites the toggles of the queued, not yet started packets
// so they alternate from tg (bulk and interrupt pipes; a control
// transfer's toggles are fixed by its stages).
func (p *pipe) retoggle(tg uint32) {
	if p.cfg.Type == usb.Control {
		return
	}
	hc := p.hc
	for x := p.head; x != nil; x = x.next {
		for i := x.pos; i < x.n; i++ {
			info := &x.td[i]
			want := info.token&^tokenToggle | tg<<19
			if want != info.token {
				info.token = want
				hc.tdMem.Write32(hc.tdOff(x.tds[i])+tdToken, want)
			}
			tg ^= 1
		}
	}
	p.toggle = tg
}

// quiesce takes the pipe's QH off the schedule and waits until the
// controller cannot be using any of its TDs (p.mu held).
func (p *pipe) quiesce() {
	hc := p.hc
	hc.mu.Lock()
	p.offline = true
	hc.relink()
	hc.mu.Unlock()
	hc.waitFrame()
}

// resume puts the QH back on the schedule, its element at the head of
// the queue (p.mu held).
func (p *pipe) resume() {
	hc := p.hc
	el := hc.tdPhys(p.dummy)
	if x := p.head; x != nil {
		if x.pos == x.skipFrom {
			x.pos = x.skipTo
		}
		el = hc.tdPhys(x.tds[x.pos])
	}
	hc.qhMem.Write32(hc.qhOff(p.qh)+qhElem, el)
	hc.qhMem.Barrier()
	hc.mu.Lock()
	p.offline = false
	hc.relink()
	hc.mu.Unlock()
}

// cancel takes the transfers for which pick is true off the quiesced
// queue, after retiring those that finished first, and returns them all
// in queue order with their results.
func (p *pipe) cancel(pick func(*xfer) bool) []*usb.Transfer {
	var done []*usb.Transfer
	for p.head != nil {
		fin, stopped, tg, err := p.scan(p.head)
		if !fin {
			break
		}
		x := p.head
		p.retire(x, err)
		if stopped {
			p.retoggle(tg)
		}
		done = append(done, x.t)
	}
	var prev *xfer
	for x := p.head; x != nil; {
		next := x.next
		if !pick(x) {
			prev = x
			x = next
			continue
		}
		hc := p.hc
		// The predecessor's last TD now leads where x's last led.
		target := hc.tdPhys(p.dummy)
		if next != nil {
			target = hc.tdPhys(next.tds[0])
		}
		if prev != nil {
			hc.tdMem.Write32(hc.tdOff(prev.tds[prev.n-1])+tdLink, target|linkVF)
		}
		tg := x.td[x.pos].token & tokenToggle >> 19
		if prev == nil {
			p.head = next
		} else {
			prev.next = next
		}
		if p.tail == x {
			p.tail = prev
		}
		// Restore x's spare rotation: its first TD may be the one its
		// predecessor links to; nothing links to x any more.
		x.submitted = false
		x.next = nil
		x.t.Actual, x.t.Err = x.actual, usb.ErrCancelled
		if x.in && x.actual > 0 {
			_ = x.m.SyncRange(busdma.PostRead, x.dataOff, x.actual)
		}
		p.hc.Stats.Cancelled.Add(1)
		done = append(done, x.t)
		// Packets behind x now follow the last one the device saw.
		saved := p.head
		p.head = next
		p.retoggle(tg)
		p.head = saved
		x = next
	}
	if p.head == nil {
		// With the queue empty, the next toggle is what retoggle left
		// (or, for a control pipe, irrelevant).
		p.tail = nil
	}
	p.hc.tdMem.Barrier()
	return done
}

// Cancel implements usb.Pipe.
func (p *pipe) Cancel(t *usb.Transfer) {
	x, ok := t.HC.(*xfer)
	if !ok || x.p != p {
		return
	}
	p.mu.Lock()
	if !x.submitted {
		p.mu.Unlock()
		return
	}
	p.quiesce()
	done := p.cancel(func(y *xfer) bool { return y == x })
	p.resume()
	p.mu.Unlock()
	for _, t := range done {
		t.Done(t)
	}
}

// Abort implements usb.Pipe.
func (p *pipe) Abort() {
	p.mu.Lock()
	if p.head == nil {
		p.mu.Unlock()
		return
	}
	p.quiesce()
	done := p.cancel(func(*xfer) bool { return true })
	p.resume()
	p.mu.Unlock()
	for _, t := range done {
		t.Done(t)
	}
}

// ResetToggle implements usb.Pipe.
func (p *pipe) ResetToggle() {
	p.mu.Lock()
	p.toggle = 0
	p.mu.Unlock()
}

// Close implements usb.Pipe: the queue is aborted, the QH leaves the
// schedule for good (after a frame, so the controller is off it) and
// its TDs go back to the pool.
func (p *pipe) Close() {
	p.Abort()
	hc := p.hc
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	hc.mu.Lock()
	l := hc.lists[p.skel]
	for i, q := range l {
		if q == p {
			hc.lists[p.skel] = append(l[:i], l[i+1:]...)
			break
		}
	}
	for i, q := range hc.pipes {
		if q == p {
			hc.pipes = append(hc.pipes[:i], hc.pipes[i+1:]...)
			break
		}
	}
	hc.relink()
	hc.mu.Unlock()
	if hc.running.Load() {
		hc.waitFrame()
	}
	hc.mu.Lock()
	hc.qhFree = append(hc.qhFree, p.qh)
	hc.tdFree = append(hc.tdFree, p.dummy)
	for _, x := range p.xfers {
		hc.tdFree = append(hc.tdFree, x.tds...)
		_ = x.m.Unload()
	}
	hc.mu.Unlock()
	p.xfers = nil
	p.mu.Unlock()
}
