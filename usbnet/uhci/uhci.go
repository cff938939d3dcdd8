// Package uhci drives an Intel UHCI USB 1.1 host controller (the PIIX4's
// function 2, 8086:7112, which QEMU's malta board always has) and
// implements usb.HostController for the USB core above it.
//
// Facts come from the Universal Host Controller Interface Design Guide
// rev 1.1 (registers §2, frame list, TD and QH layout §3), checked against
// what QEMU's hw/usb/hcd-uhci.c does with them and the sequences FreeBSD's
// sys/dev/usb/controller/uhci.c and Linux's drivers/usb/host/uhci-hcd.c
// use (reset timings, port reset, short-packet restarts).
//
// # Schedule
//
// The 1024-entry frame list points into a skeleton of nine queue heads:
// eight interrupt skeletons for intervals 128, 64, ..., 1 frames, chained
// in that order, then the async skeleton that control and bulk pipes hang
// off. Frame i enters the chain at the skeleton of interval 2^min(tz(i),7)
// (tz: trailing zero bits), so a QH after the skeleton of interval 2^k is
// visited once every 2^k frames. Every pipe has its own QH, linked after
// its skeleton.
//
// A pipe's TDs form one chain hanging off its QH's element pointer, and
// the chain always ends in an inactive "dummy" TD, where the controller
// stops (a QH whose element TD is inactive is skipped). Submit fills the
// new transfer's TDs behind the dummy, then turns the dummy into the
// transfer's first TD by storing its control word, Active set, last, after
// a barrier: the one store that publishes a complete transfer, with no
// race against the controller advancing the element pointer (the scheme
// of Linux's uhci-q.c). The transfer's own spare TD becomes the new dummy,
// so TDs rotate between a pipe's transfers and nothing is allocated.
//
// IN TDs other than a transfer's last carry SPD: a short packet stops the
// queue at that TD (the controller leaves the element pointer on it),
// the completion pass ends the transfer there, rewrites the data toggles
// of the transfers queued behind it and restarts the queue at the next
// one. Errors (stall, babble, CRC/timeout after three tries) stop the
// queue the same way.
//
// # Completion
//
// The interrupt (IOC, short packet, error) and a poll ticker both run the
// completion pass, one at a time: it scans every pipe's queue in order and
// retires the transfers whose TDs the controller is done with. A TD's
// control word is read once: Active clear first, then the length and
// status of that same load. Done is called outside the pipe's lock.
//
// Cancel and Abort take the pipe's QH off the schedule, wait until the
// frame number has advanced (the controller may still be executing a TD it
// fetched in the current frame, Design Guide §3.4.2 and uhci-q.c's unlink
// rule), and only then reuse the TDs and call Done(ErrCancelled).
//
// # Ports
//
// UHCI raises no interrupt for a connect change (only Resume Detect), so
// the root ports are polled from the ticker goroutine (Config.PortPoll),
// which calls the SetPortChange function once per change.
package uhci

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Config describes one controller.
type Config struct {
	// Name identifies it ("uhci0").
	Name string
	// Regs is the I/O BAR (RegSize bytes, little-endian).
	Regs barrier.Space
	// DMA is the platform the frame list, QHs, TDs and transfer buffers
	// come from.
	DMA busdma.Platform
	// TDs is the size of the transfer-descriptor pool (default 1024):
	// every transfer holds ceil(size/MaxPacket)+2 of them, every pipe one.
	TDs int
	// Pipes is the most pipes open at once (default 32).
	Pipes int
	// MaxTransfer is the largest transfer NewTransfer accepts (default 32 KiB).
	MaxTransfer int
	// PortPoll is the root-port poll period, which doubles as the
	// completion watchdog (default 100 ms).
	PortPoll time.Duration
}

// Stats are the controller's counters.
type Stats struct {
	Interrupts gnet.Counter
	Completed  gnet.Counter // transfers retired without error
	Errors     gnet.Counter // transfers retired with a transaction error
	Short      gnet.Counter // transfers ended early by a short packet
	Restarts   gnet.Counter // queues restarted after a short packet or error
	Cancelled  gnet.Counter
	HostErrors gnet.Counter // HSE/HCPE: the controller halted itself
	PortEvents gnet.Counter // connect changes seen by the poll
	// FrameWaits counts waits for the frame number to advance (Cancel,
	// Abort, Close); FrameWaitTimeouts those that gave up because the
	// frame counter stood still although the controller was running.
	FrameWaits, FrameWaitTimeouts gnet.Counter
}

// Errors.
var (
	ErrConfig  = errors.New("uhci: bad configuration")
	ErrReset   = errors.New("uhci: controller did not reset")
	ErrHalted  = errors.New("uhci: controller halted")
	ErrNoPort  = errors.New("uhci: no such root port")
	ErrNoSpace = errors.New("uhci: descriptor pool exhausted")
	ErrPipe    = errors.New("uhci: pipe configuration not supported")
	ErrForeign = errors.New("uhci: transfer of another pipe")
	ErrLength  = errors.New("uhci: transfer length")
)

// Skeleton QHs: 0..7 interrupt (interval 128 >> i frames), 8 async.
const (
	numSkel   = 9
	skelAsync = 8
	ports     = 2
)

// Timings.
const (
	// USB 2.0 §7.1.7.5: a root port drives reset for TDRSTR = 50 ms;
	// then TRSTRCY = 10 ms of reset recovery before the first request.
	portResetHold    = 50 * time.Millisecond
	portResetRecover = 10 * time.Millisecond
	// Global reset is held for the same 50 ms (Linux uhci-hcd.c
	// uhci_reset_hc, USB 2.0 §7.1.7.5), then 10 ms to settle.
	globalResetHold = 50 * time.Millisecond
	// HCRESET self-clears; the Design Guide gives no bound, Linux
	// allows 10 ms.
	hcResetTries = 100
	// A frame is 1 ms; the unlink wait polls FRNUM and gives up after
	// 50 frames' worth.
	framePoll        = 200 * time.Microsecond
	frameWaitTimeout = 50 * time.Millisecond
)

// HC is one UHCI controller. It implements usb.HostController.
type HC struct {
	cfg  Config
	regs barrier.Space
	tag  *busdma.Tag
	line int

	fl       barrier.Space // frame list
	flPA     uint32
	qhMem    barrier.Space
	qhPA     uint32
	tdMem    barrier.Space
	tdPA     uint32
	numQH    int
	qhHeadHW []uint32 // last head link written to each QH

	mu     sync.Mutex // the schedule: QH lists and the pools
	tdFree []uint16
	qhFree []uint16
	skel   [numSkel]uint16
	lists  [numSkel][]*pipe
	pipes  []*pipe // open pipes, in opening order

	svcMu sync.Mutex // one completion pass at a time
	scan  []*pipe    // the completion pass's copy of pipes

	started    bool
	running    atomic.Bool
	portChange usb.PortChangeHook
	reported   [ports]atomic.Bool // a connect change reported and not yet read
	stop       chan struct{}
	wg         sync.WaitGroup

	hz hazards // wrong-code hooks of -tags gowrt_hazard builds; empty otherwise

	Stats Stats
}

var _ usb.HostController = (*HC)(nil)

// New checks cfg and allocates the controller's memory: the frame list,
// the QH and TD pools and the skeleton. It does not touch the controller.
func New(cfg Config) (*HC, error) {
	if cfg.Regs == nil || cfg.DMA == nil {
		return nil, fmt.Errorf("%w: no registers or DMA platform", ErrConfig)
	}
	if cfg.Name == "" {
		cfg.Name = "uhci"
	}
	if cfg.TDs == 0 {
		cfg.TDs = 1024
	}
	if cfg.Pipes == 0 {
		cfg.Pipes = 32
	}
	if cfg.MaxTransfer == 0 {
		cfg.MaxTransfer = 32 << 10
	}
	if cfg.PortPoll == 0 {
		cfg.PortPoll = 100 * time.Millisecond
	}
	if cfg.TDs < 2 || cfg.TDs > 1<<16 || cfg.Pipes < 1 || cfg.Pipes > 1<<12 || cfg.MaxTransfer < 1 || cfg.PortPoll < 0 {
		return nil, fmt.Errorf("%w: TDs %d, Pipes %d, MaxTransfer %d", ErrConfig, cfg.TDs, cfg.Pipes, cfg.MaxTransfer)
	}
	hc := &HC{cfg: cfg, regs: cfg.Regs, line: cfg.DMA.LineSize()}
	tag, err := busdma.NewTag(cfg.DMA, busdma.TagConfig{Name: cfg.Name, MaxSize: cfg.MaxTransfer + 2*hc.line, MaxSegments: 1, BounceBuffers: 1})
	if err != nil {
		return nil, err
	}
	hc.tag = tag
	// UHCI data structures are little-endian whatever the CPU (Design
	// Guide §3: the controller is a PCI bus master reading dwords).
	fl, flPA, err := cfg.DMA.AllocCoherent(cfg.Name+"-framelist", frameListSize, frameListAlgn, barrier.LittleEndian)
	if err != nil {
		return nil, err
	}
	hc.numQH = numSkel + cfg.Pipes
	qh, qhPA, err := cfg.DMA.AllocCoherent(cfg.Name+"-qh", hc.numQH*qhSize, qhSize, barrier.LittleEndian)
	if err != nil {
		return nil, err
	}
	td, tdPA, err := cfg.DMA.AllocCoherent(cfg.Name+"-td", cfg.TDs*tdSize, tdSize, barrier.LittleEndian)
	if err != nil {
		return nil, err
	}
	if end := tdPA + uint64(cfg.TDs*tdSize); flPA>>32 != 0 || qhPA>>32 != 0 || end>>32 != 0 {
		return nil, fmt.Errorf("%w: descriptor memory above 4 GiB", ErrConfig)
	}
	hc.fl, hc.flPA = fl, uint32(flPA)
	hc.qhMem, hc.qhPA = qh, uint32(qhPA)
	hc.tdMem, hc.tdPA = td, uint32(tdPA)
	hc.qhHeadHW = make([]uint32, hc.numQH)
	for i := hc.numQH - 1; i >= numSkel; i-- {
		hc.qhFree = append(hc.qhFree, uint16(i))
	}
	for i := cfg.TDs - 1; i >= 0; i-- {
		hc.tdFree = append(hc.tdFree, uint16(i))
	}
	hc.pipes = make([]*pipe, 0, cfg.Pipes)
	hc.scan = make([]*pipe, 0, cfg.Pipes)
	for s := range hc.skel {
		hc.skel[s] = uint16(s)
		hc.qhMem.Write32(uint32(s)*qhSize+qhElem, linkT)
	}
	hc.relink()
	for i := 0; i < frameListLen; i++ {
		hc.fl.Write32(uint32(i)*4, hc.qhLink(hc.skel[frameSkel(i)]))
	}
	hc.fl.Barrier()
	return hc, nil
}

// frameSkel is the skeleton frame i enters the schedule at: interval
// 2^min(tz(i),7), where tz(0) counts as 7.
func frameSkel(i int) int {
	k := 0
	for k < 7 && i&(1<<k) == 0 {
		k++
	}
	return 7 - k
}

// intervalSkel is the skeleton for an interrupt endpoint polled every
// interval frames: the largest power of two not above it, at most 128.
func intervalSkel(interval int) int {
	k := 0
	for k < 7 && 2<<k <= interval {
		k++
	}
	return 7 - k
}

func (hc *HC) qhOff(i uint16) uint32  { return uint32(i) * qhSize }
func (hc *HC) qhLink(i uint16) uint32 { return hc.qhPA + uint32(i)*qhSize | linkQH }
func (hc *HC) tdOff(i uint16) uint32  { return uint32(i) * tdSize }
func (hc *HC) tdPhys(i uint16) uint32 { return hc.tdPA + uint32(i)*tdSize }

// setHead writes a QH's horizontal link if it changed, and orders it
// before whatever the caller publishes next.
func (hc *HC) setHead(qh uint16, v uint32) {
	if hc.qhHeadHW[qh] == v {
		return
	}
	hc.qhHeadHW[qh] = v
	hc.qhMem.Write32(hc.qhOff(qh)+qhHead, v)
	hc.qhMem.Barrier()
}

// relink makes the QHs' horizontal links match the lists (hc.mu held or
// not yet shared). It walks the chain from its end, so a QH coming on
// line has its own link in memory before its predecessor points at it,
// and a QH going off line keeps its link (the controller may be on it
// and must find its way on).
func (hc *HC) relink() {
	next := uint32(linkT)
	for s := numSkel - 1; s >= 0; s-- {
		l := hc.lists[s]
		for j := len(l) - 1; j >= 0; j-- {
			if l[j].offline {
				continue
			}
			hc.setHead(l[j].qh, next)
			next = hc.qhLink(l[j].qh)
		}
		hc.setHead(hc.skel[s], next)
		next = hc.qhLink(hc.skel[s])
	}
}

// Name implements usb.HostController.
func (hc *HC) Name() string { return hc.cfg.Name }

// Ports implements usb.HostController: the two root ports of UHCI.
func (hc *HC) Ports() int { return ports }

// Start resets the controller, programs the schedule and runs it, and
// starts the port poll.
func (hc *HC) Start() error {
	if hc.started {
		return fmt.Errorf("%w: started twice", ErrConfig)
	}
	r := hc.regs
	// Global reset, then a controller reset (Design Guide §2.1.1;
	// Linux uhci_reset_hc: GRESET for 50 ms, then HCRESET until it
	// self-clears).
	r.Write16(regUSBINTR, 0)
	r.Write16(regUSBCMD, cmdGRESET)
	r.Barrier()
	time.Sleep(globalResetHold)
	r.Write16(regUSBCMD, 0)
	r.Barrier()
	time.Sleep(10 * time.Millisecond)
	r.Write16(regUSBCMD, cmdHCRESET)
	ok := false
	for i := 0; i < hcResetTries; i++ {
		r.Barrier()
		if r.Read16(regUSBCMD)&cmdHCRESET == 0 {
			ok = true
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	if !ok {
		return ErrReset
	}
	r.Write16(regUSBSTS, stsAll)
	r.Write8(regSOFMOD, sofmodDefault)
	r.Write32(regFRBASEADD, hc.flPA)
	r.Write16(regFRNUM, 0)
	r.Write16(regUSBINTR, intrTOCRC|intrResume|intrIOC|intrSP)
	r.Barrier()
	hc.running.Store(true)
	hc.started = true
	r.Write16(regUSBCMD, cmdRS|cmdCF|cmdMAXP)
	r.Barrier()
	running := false
	for i := 0; i < 100; i++ {
		r.Barrier()
		if r.Read16(regUSBSTS)&stsHCH == 0 {
			running = true
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	if !running {
		hc.running.Store(false)
		return ErrHalted
	}
	hc.stop = make(chan struct{})
	hc.wg.Add(1)
	go hc.poll()
	return nil
}

// Stop halts the controller, ends the poll and fails every queued
// transfer with ErrGone.
func (hc *HC) Stop() {
	if !hc.running.Swap(false) {
		return
	}
	close(hc.stop)
	hc.wg.Wait()
	r := hc.regs
	r.Write16(regUSBCMD, cmdCF)
	r.Barrier()
	for i := 0; i < 100; i++ {
		r.Barrier()
		if r.Read16(regUSBSTS)&stsHCH != 0 {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	r.Write16(regUSBINTR, 0)
	r.Write16(regUSBSTS, stsAll)
	r.Barrier()
	hc.failAll(usb.ErrGone)
}

// failAll completes every queued transfer with err (the controller is
// halted, so none of their TDs is in use).
func (hc *HC) failAll(err error) {
	hc.mu.Lock()
	ps := append([]*pipe(nil), hc.pipes...)
	hc.mu.Unlock()
	for _, p := range ps {
		p.mu.Lock()
		var done []*usb.Transfer
		for x := p.head; x != nil; x = x.next {
			x.t.Err, x.t.Actual = err, 0
			x.submitted = false
			done = append(done, x.t)
		}
		p.head, p.tail = nil, nil
		p.toggle = 0
		p.mu.Unlock()
		for _, t := range done {
			t.Done(t)
		}
	}
}

// poll is the ticker goroutine: root-port connect changes and the
// completion watchdog.
func (hc *HC) poll() {
	defer hc.wg.Done()
	tk := time.NewTicker(hc.cfg.PortPoll)
	defer tk.Stop()
	for {
		select {
		case <-hc.stop:
			return
		case <-tk.C:
		}
		hc.pollPorts()
		hc.service()
	}
}

func (hc *HC) pollPorts() {
	f := hc.portChange.Get()
	for i := 0; i < ports; i++ {
		hc.regs.Barrier()
		v := hc.regs.Read16(regPORTSC1 + 2*uint32(i))
		if v&portCSC == 0 || hc.reported[i].Swap(true) {
			continue
		}
		hc.Stats.PortEvents.Add(1)
		if f != nil {
			f(i + 1)
		}
	}
}

// SetPortChange implements usb.HostController. f is called from the poll
// goroutine.
func (hc *HC) SetPortChange(f func(port int)) { hc.portChange.Set(f) }

func (hc *HC) portReg(port int) (uint32, error) {
	if port < 1 || port > ports {
		return 0, fmt.Errorf("%w: %d", ErrNoPort, port)
	}
	return regPORTSC1 + 2*uint32(port-1), nil
}

// PortStatus implements usb.HostController; it clears the port's change
// bits.
func (hc *HC) PortStatus(port int) (usb.PortStatus, error) {
	reg, err := hc.portReg(port)
	if err != nil {
		return usb.PortStatus{}, err
	}
	r := hc.regs
	r.Barrier()
	v := r.Read16(reg)
	if v&portW1C != 0 {
		r.Write16(reg, v&(portPE|portSUSP)|v&portW1C)
		r.Barrier()
	}
	hc.reported[port-1].Store(false)
	ps := usb.PortStatus{
		Connected:      v&portCCS != 0,
		Enabled:        v&portPE != 0,
		ConnectChanged: v&portCSC != 0,
		Overcurrent:    v&portOC != 0,
		Suspended:      v&portSUSP != 0,
	}
	if ps.Connected {
		ps.Speed = usb.SpeedFull
		if v&portLSDA != 0 {
			ps.Speed = usb.SpeedLow
		}
	}
	return ps, nil
}

// ResetPort implements usb.HostController: reset held for 50 ms, then
// the port enabled, its change bits cleared and 10 ms of recovery
// (USB 2.0 §7.1.7.5; Linux uhci-hub.c does the same steps).
func (hc *HC) ResetPort(port int) (usb.Speed, error) {
	reg, err := hc.portReg(port)
	if err != nil {
		return usb.SpeedUnknown, err
	}
	r := hc.regs
	r.Barrier()
	if r.Read16(reg)&portCCS == 0 {
		return usb.SpeedUnknown, fmt.Errorf("%w: %s port %d: nothing connected", usb.ErrGone, hc.cfg.Name, port)
	}
	r.Write16(reg, portPR)
	r.Barrier()
	time.Sleep(portResetHold)
	r.Write16(reg, 0)
	r.Barrier()
	time.Sleep(100 * time.Microsecond)
	var v uint16
	enabled := false
	for i := 0; i < 10 && !enabled; i++ {
		// Some controllers need PE set more than once after a reset
		// (Linux uhci-hub.c); clear the change bits with it.
		r.Write16(reg, portPE|portCSC|portPEC)
		r.Barrier()
		time.Sleep(time.Millisecond)
		r.Barrier()
		v = r.Read16(reg)
		enabled = v&portPE != 0
		if v&portCCS == 0 {
			break
		}
	}
	if !enabled {
		return usb.SpeedUnknown, fmt.Errorf("%w: %s port %d did not enable (portsc %#04x)", usb.ErrGone, hc.cfg.Name, port, v)
	}
	hc.reported[port-1].Store(false)
	time.Sleep(portResetRecover)
	if v&portLSDA != 0 {
		return usb.SpeedLow, nil
	}
	return usb.SpeedFull, nil
}

// DisablePort implements usb.HostController.
func (hc *HC) DisablePort(port int) error {
	reg, err := hc.portReg(port)
	if err != nil {
		return err
	}
	r := hc.regs
	r.Barrier()
	v := r.Read16(reg)
	r.Write16(reg, v&portSUSP)
	r.Barrier()
	return nil
}

// Interrupt services the controller; the board connects it to the
// controller's interrupt line (PCI INTx: level-triggered, maybe shared).
func (hc *HC) Interrupt() {
	r := hc.regs
	r.Barrier()
	sts := r.Read16(regUSBSTS)
	if sts&stsAll == 0 {
		return
	}
	r.Write16(regUSBSTS, sts&stsAll)
	r.Barrier()
	hc.Stats.Interrupts.Add(1)
	if sts&(stsHSE|stsHCPE) != 0 {
		// The controller stopped itself: a PCI error or a schedule it
		// could not follow. Nothing queued will complete.
		hc.Stats.HostErrors.Add(1)
		if hc.running.Swap(false) {
			close(hc.stop)
			go func() {
				hc.wg.Wait()
				hc.failAll(usb.ErrGone)
			}()
		}
		return
	}
	hc.service()
}

// reapBatch is how many transfers one pipe retires per lock hold.
const reapBatch = 16

// service is the completion pass.
func (hc *HC) service() {
	hc.svcMu.Lock()
	defer hc.svcMu.Unlock()
	hc.mu.Lock()
	hc.scan = append(hc.scan[:0], hc.pipes...)
	hc.mu.Unlock()
	var done [reapBatch]*usb.Transfer
	for _, p := range hc.scan {
		for {
			n, blocked := p.reap(&done)
			for _, t := range done[:n] {
				t.Done(t)
			}
			if hc.hz.globalOrder() && blocked {
				return
			}
			if n < len(done) {
				break
			}
		}
	}
	clear(hc.scan)
}

// waitFrame waits until the frame number has advanced past the current
// one, so that the controller has finished every TD it fetched before
// the caller's earlier stores (made visible by the barrier here).
func (hc *HC) waitFrame() {
	if hc.hz.noFrameWait() {
		return
	}
	hc.Stats.FrameWaits.Add(1)
	r := hc.regs
	r.Barrier()
	f0 := r.Read16(regFRNUM) & frnumMask
	deadline := time.Now().Add(frameWaitTimeout)
	for {
		r.Barrier()
		if r.Read16(regUSBSTS)&stsHCH != 0 || r.Read16(regFRNUM)&frnumMask != f0 {
			return
		}
		if time.Now().After(deadline) {
			hc.Stats.FrameWaitTimeouts.Add(1)
			return
		}
		time.Sleep(framePoll)
	}
}
