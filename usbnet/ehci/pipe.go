package ehci

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// maxTransfer is the largest transfer buffer a pipe hands out (bulk-in
// aggregation buffers of USB Ethernet chips are 16-24 KiB).
const maxTransfer = 64 << 10

// qh is one queue head in coherent memory.
type qh struct {
	mem barrier.Space
	pa  uint32
}

func (q *qh) write(off, v uint32) { q.mem.Write32(off, v) }
func (q *qh) read(off uint32) uint32 {
	return q.mem.Read32(off)
}

// qtd is one transfer descriptor in coherent memory, owned by a pipe's
// pool; while submitted it belongs to one transfer.
type qtd struct {
	mem  barrier.Space
	off  uint32
	pa   uint32
	n    int  // bytes this qTD was given
	data bool // part of the data stage: counts toward Actual
	in   bool // an IN data qTD (a short packet ends the stage)
}

func (d *qtd) write(field, v uint32) { d.mem.Write32(d.off+field, v) }
func (d *qtd) read(field uint32) uint32 {
	return d.mem.Read32(d.off + field)
}

// fill writes every word of the qTD but its token.
func (d *qtd) fill(next, alt, pa uint32) {
	d.write(tdNext, next)
	d.write(tdAlt, alt)
	d.write(tdBuf0, pa)
	page := pa &^ (pageSize - 1)
	for i := uint32(1); i < tdPages; i++ {
		page += pageSize
		d.write(tdBuf0+4*i, page)
	}
}

// xfer is the controller's state for one usb.Transfer.
type xfer struct {
	p       *pipe
	t       *usb.Transfer
	m       *busdma.Map
	dir     busdma.Dir
	bufPA   uint32
	setup   barrier.Space // control: the 8-byte SETUP packet (coherent)
	setupPA uint32
	maxTDs  int
	tds     []*qtd // the qTDs of the current submission, in order
	after   uint32 // where the next transfer's first qTD goes (the dummy at submit)
	queued  bool
}

// finish records a result; the caller removes x from its pipe's queue.
func (x *xfer) finish(actual int, err error) {
	x.t.Actual = actual
	x.t.Err = err
	x.queued = false
}

// pipe is an open endpoint: its qH, the pool of qTDs its transfers draw
// from, and the transfers in flight.
type pipe struct {
	c           *Controller
	cfg         usb.PipeConfig
	q           *qh
	period      int // interrupt pipes: polling period in frames
	control, in bool
	// rootPort is the root port the device hangs on, when the pipe's
	// configuration tells (0: behind a hub, or several root ports): a
	// transaction error there with the port disconnected is ErrGone.
	rootPort int

	opMu     sync.Mutex // one Cancel/Abort/Close/ResetToggle at a time
	closed   bool
	aborting bool // an Abort or Close is in progress: Submit refuses
	linked   bool
	free     []*qtd // unused qTDs
	dummy    *qtd   // the inactive qTD ending the queue
	queue    []*xfer
	xfers    []*xfer
	spare    []*xfer // completion scratch of Cancel/Abort, cap = len(xfers)
}

// OpenPipe implements usb.HostController.
func (c *Controller) OpenPipe(cfg usb.PipeConfig) (usb.Pipe, error) {
	bad := func(format string, a ...any) (usb.Pipe, error) {
		return nil, fmt.Errorf("%w: %s: pipe to %d ep %#02x: %s", ErrConfig, c.cfg.Name, cfg.Address, cfg.Endpoint, fmt.Sprintf(format, a...))
	}
	switch {
	case cfg.Address > 127:
		return bad("address")
	case cfg.Endpoint&^(usb.EndpointIn|0xf) != 0:
		return bad("endpoint")
	case cfg.Type == usb.Isochronous:
		return bad("isochronous endpoints are not supported")
	case cfg.MaxPacket < 1 || cfg.MaxPacket > 1024:
		return bad("max packet %d", cfg.MaxPacket)
	}
	var eps uint32
	switch cfg.Speed {
	case usb.SpeedHigh:
		eps = epsHigh
	case usb.SpeedFull:
		eps = epsFull
	case usb.SpeedLow:
		eps = epsLow
	default:
		return bad("speed %v", cfg.Speed)
	}
	hubAddr, hubPort := uint32(cfg.HubAddress), uint32(cfg.HubPort)
	if cfg.Speed != usb.SpeedHigh && hubAddr == 0 {
		// A full/low-speed device on a root port: only an integrated
		// TT reaches it; its port field names the root port and its hub
		// address is 0 (Linux qh_make for TDI's root-hub TT).
		if !c.cfg.IntegratedTT {
			return bad("%v-speed device on a root port needs the companion controller", cfg.Speed)
		}
		if hubPort == 0 {
			if c.nports != 1 {
				return bad("HubPort must name the root port for the integrated TT")
			}
			hubPort = 1
		}
	}
	p := &pipe{c: c, cfg: cfg, control: cfg.Type == usb.Control, in: cfg.In() && cfg.Type != usb.Control}
	switch {
	case cfg.HubAddress == 0 && hubPort != 0:
		p.rootPort = int(hubPort) // a full/low-speed device on the root TT
	case cfg.HubAddress == 0 && c.nports == 1:
		p.rootPort = 1
	}
	char := uint32(cfg.Address) | uint32(cfg.Endpoint&0xf)<<qhEndptPos | eps<<qhEPSPos |
		uint32(cfg.MaxPacket)<<qhMaxPPos
	caps := uint32(qhMultOne) << qhMultPos
	if cfg.Speed != usb.SpeedHigh {
		caps |= hubAddr<<qhHubPos | hubPort<<qhPortPos
	}
	switch cfg.Type {
	case usb.Control:
		char |= qhDTC // toggles from the qTDs: SETUP DATA0, data from DATA1, status DATA1
		if cfg.Speed != usb.SpeedHigh {
			char |= qhCtrlEP
		}
	case usb.Interrupt:
		smask, period := schedule(cfg)
		p.period = period
		caps |= smask << qhSMaskPos
		if cfg.Speed != usb.SpeedHigh {
			caps |= splitCMask << qhCMaskPos
		}
	}
	if cfg.Speed == usb.SpeedHigh && cfg.Type != usb.Interrupt {
		char |= qhNakReload << qhNakRLPos // NAK throttling (Linux EHCI_TUNE_RL_HS); 0 for periodic and split qHs
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return nil, fmt.Errorf("%w: %s stopped", usb.ErrGone, c.cfg.Name)
	}
	q, err := c.newQH()
	if err != nil {
		return nil, err
	}
	p.q = q
	d, err := p.grow(1, 0)
	if err != nil {
		c.freeQH = append(c.freeQH, q)
		return nil, err
	}
	p.dummy = d[0]
	p.free = p.free[:0]
	p.dummy.write(tdNext, linkTerminate)
	p.dummy.write(tdAlt, linkTerminate)
	p.dummy.write(tdToken, 0)
	q.write(qhChar, char)
	q.write(qhCaps, caps)
	q.write(qhCurrent, 0)
	q.write(qhOverlay+tdNext, p.dummy.pa)
	q.write(qhOverlay+tdAlt, linkTerminate)
	q.write(qhOverlay+tdToken, 0)
	for i := uint32(0); i < tdPages; i++ {
		q.write(qhOverlay+tdBuf0+4*i, 0)
	}
	c.pipes = append(c.pipes, p)
	p.link()
	return p, nil
}

// schedule returns an interrupt endpoint's microframe mask and polling
// period in frames (USB 2.0 Table 9-13: bInterval is in frames at full and
// low speed, 2^(bInterval-1) microframes at high speed). Periods are
// rounded down to a power of two, at most maxPeriod frames: polling more
// often than asked is allowed (USB 2.0 §5.7.4).
func schedule(cfg usb.PipeConfig) (smask uint32, period int) {
	iv := max(cfg.Interval, 1)
	if cfg.Speed == usb.SpeedHigh {
		uframes := 1 << min(iv-1, 15)
		switch {
		case uframes == 1:
			return periodicSMax, 1
		case uframes == 2:
			return 0x55, 1
		case uframes == 4:
			return 0x11, 1
		}
		return 0x01, min(uframes/8, maxPeriod)
	}
	period = 1
	for period*2 <= iv && period*2 <= maxPeriod {
		period *= 2
	}
	return 0x01, period // start-split in microframe 0; complete-splits from splitCMask
}

// grow adds n qTDs to the pool in one coherent block, with extra bytes
// after them (a control transfer's SETUP packet). It returns the block's
// qTDs and the extra area.
func (p *pipe) grow(n, extra int) ([]*qtd, error) {
	mem, pa, err := p.c.tag.AllocCoherent(n*tdSize+extra, p.c.cfg.DescOrder)
	if err != nil {
		return nil, err
	}
	if pa+uint64(n*tdSize+extra) > 1<<32 {
		return nil, fmt.Errorf("%w: descriptors at %#x above 4 GiB", ErrConfig, pa)
	}
	tds := make([]*qtd, n)
	for i := range tds {
		tds[i] = &qtd{mem: mem, off: uint32(i * tdSize), pa: uint32(pa) + uint32(i*tdSize)}
		p.free = append(p.free, tds[i])
	}
	return tds, nil
}

// Config implements usb.Pipe.
func (p *pipe) Config() usb.PipeConfig { return p.cfg }

// dataTDs returns how many qTDs n bytes at bus address pa need: up to five
// pages each, every qTD but the last a whole number of packets so that a
// packet never spans two (EHCI §3.5.4).
func dataTDs(pa uint32, n, maxp int) int {
	count := 0
	for n > 0 {
		chunk := chunkAt(pa, n, maxp)
		pa += uint32(chunk)
		n -= chunk
		count++
	}
	return max(count, 1)
}

// chunkAt is the size of the qTD starting at pa with n bytes left.
func chunkAt(pa uint32, n, maxp int) int {
	room := tdPages*pageSize - int(pa&(pageSize-1))
	if n <= room {
		return n
	}
	return room - room%maxp
}

// NewTransfer implements usb.Pipe.
func (p *pipe) NewTransfer(size int) (*usb.Transfer, error) {
	c := p.c
	if size < 0 || size > maxTransfer {
		return nil, fmt.Errorf("%w: %s: transfer of %d bytes (max %d)", ErrConfig, c.cfg.Name, size, maxTransfer)
	}
	dir := busdma.ToDevice
	switch {
	case p.control:
		dir = busdma.Bidirectional
	case p.in:
		dir = busdma.FromDevice
	}
	buf, err := c.tag.Alloc(max(size, 1))
	if err != nil {
		return nil, err
	}
	m, err := c.tag.NewMap()
	if err != nil {
		return nil, err
	}
	segs, err := m.Load(buf[:cap(buf)], dir)
	if err != nil {
		return nil, err
	}
	if len(segs) != 1 || segs[0].Addr+uint64(cap(buf)) > 1<<32 {
		_ = m.Unload()
		return nil, fmt.Errorf("%w: %s: transfer buffer not one 32-bit segment", ErrConfig, c.cfg.Name)
	}
	x := &xfer{p: p, m: m, dir: dir, bufPA: uint32(segs[0].Addr)}
	x.maxTDs = dataTDs(x.bufPA, size, p.cfg.MaxPacket)
	extra := 0
	switch {
	case p.control:
		x.maxTDs += 2 // SETUP and status stages
		extra = 32
	case !p.in:
		x.maxTDs++ // a trailing zero-length packet (usb.ZeroLengthPacket)
	}
	t := &usb.Transfer{Buf: buf[:size], Len: size, HC: x}
	x.t = t
	x.tds = make([]*qtd, 0, x.maxTDs)

	c.mu.Lock()
	defer c.mu.Unlock()
	if p.closed {
		_ = m.Unload()
		return nil, usb.ErrClosed
	}
	tds, err := p.grow(x.maxTDs, extra)
	if err != nil {
		_ = m.Unload()
		return nil, err
	}
	if p.control {
		last := tds[len(tds)-1]
		x.setup = last.mem
		x.setupPA = last.pa + tdSize
	}
	p.xfers = append(p.xfers, x)
	p.spare = make([]*xfer, len(p.xfers))
	if p.queue == nil || cap(p.queue) < len(p.xfers) {
		q := make([]*xfer, len(p.queue), len(p.xfers)*2)
		copy(q, p.queue)
		p.queue = q
	}
	total := 0
	for _, op := range c.pipes {
		total += len(op.xfers)
	}
	if len(c.done) < total {
		c.done = make([]*xfer, total*2)
	}
	return t, nil
}

// take pops a free qTD.
func (p *pipe) take() *qtd {
	n := len(p.free) - 1
	d := p.free[n]
	p.free = p.free[:n]
	return d
}

// Submit implements usb.Pipe.
func (p *pipe) Submit(t *usb.Transfer) error {
	x, ok := t.HC.(*xfer)
	if !ok || x.p != p {
		return fmt.Errorf("%w: %s: transfer not made by this pipe", ErrConfig, p.c.cfg.Name)
	}
	if t.Len < 0 || t.Len > len(t.Buf) || (p.control && t.Len > int(t.Setup.Length)) {
		return fmt.Errorf("%w: %s: transfer length %d (buffer %d)", ErrConfig, p.c.cfg.Name, t.Len, len(t.Buf))
	}
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case p.closed:
		return usb.ErrClosed
	case p.aborting:
		// A Done that resubmits must not keep an aborting pipe busy
		// (usb.Pipe.Submit).
		return fmt.Errorf("%w: %s: pipe being aborted", usb.ErrCancelled, c.cfg.Name)
	case x.queued:
		return usb.ErrBusy
	case c.dead || !c.started:
		return fmt.Errorf("%w: %s not running", usb.ErrGone, c.cfg.Name)
	}
	in := p.in || (p.control && t.Setup.In())
	if t.Len > 0 {
		var err error
		if in {
			err = x.m.Sync(busdma.PreRead)
		} else {
			err = x.m.SyncRange(busdma.PreWrite, 0, t.Len)
		}
		if err != nil {
			return err
		}
	}
	t.Actual, t.Err = 0, nil
	p.build(x, in)
	x.queued = true
	p.queue = append(p.queue, x)
	return nil
}

// build writes x's qTDs into the dummy and fresh qTDs, and activates the
// first one last: until then the controller sees the same inactive dummy.
func (p *pipe) build(x *xfer, in bool) {
	t := x.t
	maxp := p.cfg.MaxPacket
	first := p.dummy
	x.tds = append(x.tds[:0], first)
	wrongFirst := p.c.hz.tokenFirst()
	// Count the qTDs first so the new dummy's place is known.
	n := dataTDs(x.bufPA, t.Len, maxp)
	if t.Len == 0 && p.control {
		n = 0
	}
	zlp := !p.control && !in && t.Flags&usb.ZeroLengthPacket != 0 && t.Len > 0 && t.Len%maxp == 0
	if zlp {
		n++
	}
	if p.control {
		n += 2
	}
	for i := 1; i < n; i++ {
		x.tds = append(x.tds, p.take())
	}
	dummy := p.take()
	dummy.write(tdNext, linkTerminate)
	dummy.write(tdAlt, linkTerminate)
	dummy.write(tdToken, 0)
	x.after = dummy.pa
	p.dummy = dummy

	// Toggles: a control qH takes them from the qTDs (DTC=1); other qHs
	// keep theirs in the overlay and ignore the qTD's (DTC=0).
	var tokens [64]uint32 // more than any transfer's qTDs (maxTransfer / 16 KiB + 3)
	status := x.after
	if p.control {
		status = x.tds[n-1].pa
	}
	i := 0
	if p.control {
		s := t.Setup.Bytes()
		for k := 0; k < len(s); k++ {
			x.setup.Write8(x.setupOff()+uint32(k), s[k])
		}
		d := x.tds[0]
		d.n, d.data, d.in = 0, false, false
		tokens[0] = tokActive | pidSetup<<tokPIDPos | p.c.cerr() | 8<<tokBytesPos
		if wrongFirst {
			// Wrong code (hazard builds only): the token goes out
			// before the qTD's other words.
			d.write(tdToken, tokens[0])
		}
		d.fill(x.tds[1].pa, linkTerminate, x.setupPA)
		i = 1
	}
	pid := uint32(pidOut)
	if in {
		pid = pidIn
	}
	pa, left := x.bufPA, t.Len
	dataEnd := n
	if p.control {
		dataEnd = n - 1
	}
	for ; i < dataEnd; i++ {
		d := x.tds[i]
		chunk := chunkAt(pa, left, maxp)
		next := x.after
		if i+1 < n {
			next = x.tds[i+1].pa
		}
		alt := uint32(linkTerminate)
		if in && !p.c.hz.noAltNext() {
			alt = status // a short packet ends the data stage
		}
		d.n, d.data, d.in = chunk, true, in
		tok := tokActive | pid<<tokPIDPos | p.c.cerr() | uint32(chunk)<<tokBytesPos
		if p.control && i == 1 {
			tok |= tokDT // the data stage starts with DATA1
		}
		tokens[i] = tok
		if wrongFirst && i == 0 {
			d.write(tdToken, tok) // wrong code, as above
		}
		d.fill(next, alt, pa)
		pa += uint32(chunk)
		left -= chunk
	}
	if p.control {
		d := x.tds[n-1]
		spid := uint32(pidIn) // status goes the other way; IN when there is no data stage
		if in && t.Len > 0 {
			spid = pidOut
		}
		d.n, d.data, d.in = 0, false, false
		d.fill(x.after, linkTerminate, 0)
		tokens[n-1] = tokActive | spid<<tokPIDPos | p.c.cerr() | tokDT
	}
	tokens[n-1] |= tokIOC
	for k := n - 1; k >= 1; k-- {
		x.tds[k].write(tdToken, tokens[k])
	}
	first.mem.Barrier()
	if !wrongFirst {
		first.write(tdToken, tokens[0])
	}
	first.mem.Barrier()
}

// setupOff is the SETUP area's offset in its block.
func (x *xfer) setupOff() uint32 { return uint32(x.maxTDs * tdSize) }

// scan retires x's of p that completed, in order, into out[n:], and
// returns the new n. Lock held.
func (p *pipe) scan(out []*xfer, n int) int {
	for len(p.queue) > 0 {
		x := p.queue[0]
		done, actual, err, halted := p.check(x)
		if !done {
			break
		}
		p.retire(x, actual, err)
		copy(p.queue, p.queue[1:])
		p.queue[len(p.queue)-1] = nil
		p.queue = p.queue[:len(p.queue)-1]
		if halted && !p.c.hz.noRestart() {
			p.restart(x.after)
		}
		out[n] = x
		n++
	}
	return n
}

// check reads x's qTD tokens, in order: x is done when its last qTD
// retired, when one halted, or when an IN data qTD ended short (a
// control transfer then still waits for its status stage).
func (p *pipe) check(x *xfer) (done bool, actual int, err error, halted bool) {
	short := false
	overlay := false
	if p.c.hz.overlayDone() {
		// Wrong code (hazard builds only): the qH overlay has moved past
		// x (its current qTD is not one of x's, or is x's last and
		// retired), so x is taken as done and its qTDs' tokens are read
		// as they are, written back or not.
		cur := p.q.read(qhCurrent)
		last := x.tds[len(x.tds)-1]
		overlay = (cur != 0 && !x.owns(cur)) || (cur == last.pa && p.q.read(qhOverlay+tdToken)&tokActive == 0)
	}
	for _, d := range x.tds {
		if short && d.data {
			continue
		}
		tok := d.read(tdToken)
		if tok&tokActive != 0 && !overlay {
			return false, 0, nil, false
		}
		left := int(tok >> tokBytesPos & tokBytesMax)
		if d.data {
			actual += d.n - min(left, d.n)
		}
		if tok&tokHalted != 0 {
			return true, actual, p.errOf(tok), true
		}
		if d.in && left > 0 {
			short = true
			if !p.control {
				break
			}
		}
	}
	if short && x.t.Flags&usb.ShortOK == 0 {
		p.c.Stats.Shorts.Add(1)
		return true, actual, fmt.Errorf("%w: %d of %d bytes", usb.ErrShort, actual, x.t.Len), false
	}
	return true, actual, nil, false
}

// errOf maps a halted qTD's status, telling an unplugged device (a
// transaction error with its root port no longer connected) from a
// failing one. Lock held.
func (p *pipe) errOf(tok uint32) error {
	err := p.c.errOf(tok)
	if err == usb.ErrTransaction && p.rootPort != 0 &&
		p.c.read(p.c.portReg(p.rootPort))&portCCS == 0 {
		return fmt.Errorf("%w: %w on a disconnected port", usb.ErrGone, err)
	}
	return err
}

// cerr is the error counter a qTD starts with: three tries before a
// transaction error halts the queue (EHCI §3.5.3; 0 would retry forever,
// and a device unplugged mid-transfer would hang its pipe).
func (c *Controller) cerr() uint32 {
	if c.hz.cerrZero() {
		return 0 // wrong code (hazard builds only)
	}
	return tokCErr3
}

// errOf maps a halted qTD's status to the usb package's errors (EHCI
// §4.10.3, §4.15.1.1).
func (c *Controller) errOf(tok uint32) error {
	switch {
	case tok&tokBabble != 0 && !c.hz.noBabble():
		c.Stats.Babble.Add(1)
		return usb.ErrBabble
	case tok&tokBufErr != 0:
		c.Stats.BufferErrs.Add(1)
		return usb.ErrDataBuffer
	case tok&tokXactErr != 0:
		c.Stats.XactErrs.Add(1)
		return usb.ErrTransaction
	}
	c.Stats.Stalls.Add(1)
	return usb.ErrStall
}

// retire finishes x: its buffer back to the CPU, its qTDs back to the pool.
func (p *pipe) retire(x *xfer, actual int, err error) {
	t := x.t
	if t.Len > 0 {
		if x.dir&busdma.FromDevice != 0 && (p.in || t.Setup.In()) {
			if actual > 0 {
				_ = x.m.SyncRange(busdma.PostRead, 0, actual)
			}
		} else {
			_ = x.m.SyncRange(busdma.PostWrite, 0, t.Len)
		}
	}
	p.free = append(p.free, x.tds...)
	for i := range x.tds {
		x.tds[i] = nil
	}
	x.tds = x.tds[:0]
	x.finish(actual, err)
	if err == nil {
		p.c.Stats.Completed.Add(1)
	} else {
		p.c.Stats.Failed.Add(1)
	}
}

// restart lets a halted qH go on with the transfer after the failed one.
// The controller does not touch a halted qH's overlay (EHCI §4.10.2), so
// it is rewritten in place: pointers first, the token (halt cleared,
// toggle kept) last.
func (p *pipe) restart(next uint32) {
	q := p.q
	q.write(qhOverlay+tdNext, next)
	q.write(qhOverlay+tdAlt, linkTerminate)
	q.mem.Barrier()
	q.write(qhOverlay+tdToken, q.read(qhOverlay+tdToken)&tokDT)
	q.mem.Barrier()
}

// resetQueue forgets every queued transfer after the controller stopped:
// the qTDs go back to the pool and the overlay points at the dummy. Lock
// held.
func (p *pipe) resetQueue() {
	for _, x := range p.queue {
		p.free = append(p.free, x.tds...)
		clear(x.tds)
		x.tds = x.tds[:0]
	}
	clear(p.queue)
	p.queue = p.queue[:0]
	p.dummy.write(tdToken, 0)
	p.dummy.write(tdNext, linkTerminate)
	p.dummy.write(tdAlt, linkTerminate)
	p.q.write(qhOverlay+tdNext, p.dummy.pa)
	p.q.write(qhOverlay+tdAlt, linkTerminate)
	p.q.write(qhOverlay+tdToken, p.q.read(qhOverlay+tdToken)&tokDT)
	p.q.mem.Barrier()
}
