// Package ehci drives an EHCI (USB 2.0 high-speed) host controller and
// implements usb.HostController for it: the root hub's ports, and pipes to
// control, bulk and interrupt endpoints with several transfers in flight
// each.
//
// It is written for the EHCI cores of the Atheros/QCA AR71xx family (big-
// endian registers and descriptors; on AR724x and later a ChipIdea/TDI core
// with a transaction translator on its root port) and for QEMU's PCI EHCI
// (little-endian), from the EHCI specification rev 1.0 and the facts in
// FreeBSD sys/dev/usb/controller/ehci.c, Linux drivers/usb/host/ehci-*.c
// (ehci-platform for ath79) and QEMU hw/usb/hcd-ehci.c.
//
// # Schedules
//
// Every control and bulk pipe has one queue head (qH) that stays in the
// asynchronous schedule while the pipe is open; interrupt pipes have theirs
// in the periodic schedule (a 1024-entry frame list whose entries lead to
// the interrupt qHs, longest period first). A qH's queue of transfer
// descriptors (qTDs) always ends in an inactive dummy qTD: a new transfer
// is written into the dummy and the qTDs after it, a fresh dummy is put at
// its end, and the first qTD's token is made active last, after a barrier
// (Linux ehci-q.c qh_append_tds does the same), so the controller, which
// re-reads the dummy whenever it looks at the idle qH, never sees a
// half-written transfer.
//
// Transfers complete in order per pipe. Completion is decided from each
// qTD's own token, never from the qH overlay: the controller writes the
// overlay and the qTDs back at moments of its choosing.
//
// Taking a qTD out of a live queue (Cancel, Abort, Close) first takes the
// qH out of its schedule and waits until the controller can no longer hold
// it: the async-advance doorbell (USBCMD.IAAD, answered by USBSTS.IAA) for
// the asynchronous schedule, a frame's turn of FRINDEX for the periodic
// one (EHCI §4.8.2, §4.8.3). Only then are pointers patched, qTDs freed and
// the qH put back or reused.
//
// Submit and completion allocate nothing: transfers and their buffers,
// maps and qTDs are set up by Pipe.NewTransfer.
package ehci

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Timings.
const (
	// haltTimeout bounds the wait for HCHalted after clearing Run: the
	// controller halts within 16 microframes (EHCI §2.3.1), Linux waits
	// up to 16 * 125 µs.
	haltTimeout = 2 * time.Millisecond
	// resetTimeout bounds HCRESET (Linux ehci_reset: 250 ms).
	resetTimeout = 250 * time.Millisecond
	// portResetTime is the root port reset (USB 2.0 §7.1.7.5 TDRSTR:
	// 50 ms for a root port).
	portResetTime = 50 * time.Millisecond
	// portResetDone bounds the wait for PR to read 0 after software
	// cleared it (EHCI §2.3.9: within 2 ms).
	portResetDone = 2 * time.Millisecond
	// resetRecovery is TRSTRCY (USB 2.0 §7.1.7.5, §9.2.6.2): 10 ms
	// before the device must answer at address 0.
	resetRecovery = 10 * time.Millisecond
	// powerOnGood is the wait after port power: the root hub's
	// bPwrOn2PwrGood, 20 ms in Linux's EHCI root hub descriptor.
	powerOnGood = 20 * time.Millisecond
	// configFlagSettle: Linux ehci_run waits 5 ms after CONFIGFLAG so
	// port routing has settled before ports are read.
	configFlagSettle = 5 * time.Millisecond
	// advanceTimeout bounds the wait for the async-advance doorbell's
	// answer or a periodic frame's turn (a microframe or two on a live
	// controller). A controller that misses it is dead (or stopped) as
	// far as the pipe is concerned.
	advanceTimeout = time.Second
	pollInterval   = 20 * time.Microsecond
)

// Errors.
var (
	ErrConfig = errors.New("ehci: bad configuration")
	ErrHalt   = errors.New("ehci: controller did not halt")
	ErrReset  = errors.New("ehci: controller reset did not complete")
	ErrPort   = errors.New("ehci: bad port")
	// ErrCompanion: the device on the port is full- or low-speed and the
	// controller has no transaction translator for it; the port was
	// handed to the companion controller (an OHCI, which gowrt does not
	// drive) or, with none, left disabled.
	ErrCompanion = errors.New("ehci: full/low-speed device needs the companion controller")
	// ErrNoEnable: a port with an integrated TT did not enable after
	// reset (the device went away or did not answer the chirp).
	ErrNoEnable = errors.New("ehci: port did not enable after reset")
	// ErrAdvance: the async-advance doorbell or frame counter did not
	// move in time.
	ErrAdvance = errors.New("ehci: schedule did not advance")
)

// Config describes one controller.
type Config struct {
	// Name identifies the controller ("ehci0").
	Name string
	// Regs is the capability registers' region (on the AR724x and later
	// the block's base + 0x100); the operational registers start
	// CAPLENGTH bytes into it. Its byte order is the board's
	// (big-endian MMIO on the AR71xx family).
	Regs barrier.Space
	// DMA is the platform descriptor and buffer memory comes from.
	DMA busdma.Platform
	// DescOrder is the byte order the controller reads descriptors in
	// (big-endian on the AR71xx family, little-endian on PCI).
	DescOrder barrier.Order
	// IntegratedTT: a ChipIdea/TDI core with a transaction translator
	// on its root ports (AR724x, AR913x, AR933x, AR934x, QCA955x: Linux
	// ath79 "has_tt"). Full- and low-speed devices then run on the root
	// port with split transactions, the port speed comes from PORTSC
	// PSPD, and the core must be put in host mode (USBMODE) after every
	// reset.
	IntegratedTT bool
	// BigEndianCore sets USBMODE.ES on an integrated-TT core after
	// reset, as Linux tdi_reset does for big-endian MMIO.
	BigEndianCore bool
	// SynopsysIAABug: the core (the AR71xx's, Linux ath79 "v1" platform
	// data has_synopsys_hc_bug) may still hold the qH after the one it
	// last ran when that qH is unlinked, even after answering the
	// async-advance doorbell. The driver then rewrites ASYNCLISTADDR
	// with the head after every answer, so the core starts its walk
	// afresh (Linux end_iaa_cycle).
	SynopsysIAABug bool
}

// Stats are the controller's counters, read without a lock.
type Stats struct {
	Interrupts, Spurious     gnet.Counter
	Completed, Failed        gnet.Counter // transfers retired with and without error
	Cancelled                gnet.Counter
	Stalls, Babble, XactErrs gnet.Counter
	BufferErrs, Shorts       gnet.Counter
	AsyncAdvances            gnet.Counter // doorbells answered
	AdvanceTimeouts          gnet.Counter
	HostSystemErrors         gnet.Counter
	PortChanges              gnet.Counter
}

// Controller is one EHCI host controller. It implements usb.HostController.
type Controller struct {
	cfg    Config
	regs   barrier.Space
	op     uint32 // CAPLENGTH: operational registers' offset
	nports int
	ncc    int // companion controllers
	has64  bool

	tag      *busdma.Tag // descriptors: 32-byte aligned coherent memory
	frames   barrier.Space
	framesPA uint32
	head     *qh // async schedule head: a dummy qH with H set, never active

	mu          sync.Mutex // schedule state below
	started     bool
	dead        bool
	pipes       []*pipe              // open pipes
	async       []*pipe              // linked async qHs in ring order after the head
	periodic    []*pipe              // linked interrupt qHs, longest period first
	frameShadow [frameListLen]uint32 // what the frame list holds
	freeQH      []*qh
	done        []*xfer // completion scratch of Interrupt, cap = transfers

	advMu    sync.Mutex // one doorbell (or frame wait) at a time
	svcMu    sync.Mutex // one completion pass at a time
	onChange usb.PortChangeHook

	hz hazards // wrong-code hook of -tags gowrt_hazard builds; empty otherwise

	Stats Stats
}

var _ usb.HostController = (*Controller)(nil)

// New checks the controller's capability registers and sets up its
// schedules' memory; Start resets and runs it.
func New(cfg Config) (*Controller, error) {
	if cfg.Regs == nil || cfg.DMA == nil {
		return nil, fmt.Errorf("%w: Regs and DMA are required", ErrConfig)
	}
	if cfg.Name == "" {
		cfg.Name = "ehci"
	}
	c := &Controller{cfg: cfg, regs: cfg.Regs}
	capw := c.regs.Read32(regCapBase)
	c.op = capw & 0xff
	ver := capw >> 16
	if c.op < 0x10 || c.op%4 != 0 {
		return nil, fmt.Errorf("%w: %s: CAPLENGTH %#x", ErrConfig, cfg.Name, c.op)
	}
	if ver < 0x0095 || ver > 0x01ff {
		// 0x0095 for pre-1.0 cores, 0x0100 for EHCI 1.0 (Linux accepts both).
		return nil, fmt.Errorf("%w: %s: HCIVERSION %#x", ErrConfig, cfg.Name, ver)
	}
	hcs := c.regs.Read32(regHCSParam)
	c.nports = int(hcs & hcsNPorts)
	c.ncc = int(hcs & hcsNCC >> hcsNCCPos)
	c.has64 = c.regs.Read32(regHCCParam)&hcc64Bit != 0
	if c.nports == 0 {
		return nil, fmt.Errorf("%w: %s: no ports", ErrConfig, cfg.Name)
	}
	tag, err := busdma.NewTag(cfg.DMA, busdma.TagConfig{Name: cfg.Name, Alignment: 32,
		MaxSize: maxTransfer, AddrLimit: 0xffff_ffff, BounceBuffers: 1})
	if err != nil {
		return nil, err
	}
	c.tag = tag
	fl, pa, err := cfg.DMA.AllocCoherent(cfg.Name+"-frames", frameListLen*4, frameListAlign, cfg.DescOrder)
	if err != nil {
		return nil, err
	}
	if pa%frameListAlign != 0 || pa > 0xffff_ffff {
		return nil, fmt.Errorf("%w: %s: frame list at %#x", ErrConfig, cfg.Name, pa)
	}
	c.frames, c.framesPA = fl, uint32(pa)
	for i := 0; i < frameListLen; i++ {
		c.frames.Write32(uint32(i*4), linkTerminate)
		c.frameShadow[i] = linkTerminate
	}
	c.head, err = c.newQH()
	if err != nil {
		return nil, err
	}
	// The head: H set, points at itself, its overlay halted so the
	// controller never runs it (Linux ehci_init's async head).
	h := c.head
	h.write(qhHLink, h.pa|linkTypeQH)
	h.write(qhChar, qhHead)
	h.write(qhCaps, qhMultOne<<qhMultPos)
	h.write(qhCurrent, 0)
	h.write(qhOverlay+tdNext, linkTerminate)
	h.write(qhOverlay+tdAlt, linkTerminate)
	h.write(qhOverlay+tdToken, tokHalted)
	h.mem.Barrier()
	return c, nil
}

// Name implements usb.HostController.
func (c *Controller) Name() string { return c.cfg.Name }

// Ports implements usb.HostController.
func (c *Controller) Ports() int { return c.nports }

func (c *Controller) read(off uint32) uint32 {
	c.regs.Barrier()
	return c.regs.Read32(c.op + off)
}

func (c *Controller) write(off, v uint32) {
	c.regs.Write32(c.op+off, v)
	c.regs.Barrier()
}

// poll reads the operational register off until (v & mask) == want or
// timeout passes, and reports the last value and whether it matched.
func (c *Controller) poll(off, mask, want uint32, timeout time.Duration) (uint32, bool) {
	deadline := time.Now().Add(timeout)
	for {
		v := c.read(off)
		if v&mask == want {
			return v, true
		}
		if time.Now().After(deadline) {
			return v, false
		}
		time.Sleep(pollInterval)
	}
}

// reset halts and resets the controller (EHCI §2.3.1 HCRESET; Linux
// ehci_halt, ehci_reset, tdi_reset).
func (c *Controller) reset() error {
	c.write(regUSBIntr, 0)
	c.write(regUSBCmd, c.read(regUSBCmd)&^(cmdRun|cmdPSE|cmdASE))
	if _, ok := c.poll(regUSBSts, stsHalted, stsHalted, haltTimeout); !ok {
		return fmt.Errorf("%w: %s", ErrHalt, c.cfg.Name)
	}
	c.write(regUSBCmd, cmdHCReset)
	if _, ok := c.poll(regUSBCmd, cmdHCReset, 0, resetTimeout); !ok {
		return fmt.Errorf("%w: %s", ErrReset, c.cfg.Name)
	}
	if c.cfg.IntegratedTT {
		// A ChipIdea core comes out of reset in idle mode: neither host
		// nor device until USBMODE says so.
		mode := uint32(usbModeHost)
		if c.cfg.BigEndianCore {
			mode |= usbModeBE
		}
		c.write(regTDIUSBMode, c.read(regTDIUSBMode)&^(usbModeHost|usbModeBE)|mode)
	}
	return nil
}

// Start resets the controller, installs the schedules, runs it, takes the
// ports from any companion (CONFIGFLAG) and powers them.
func (c *Controller) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("%w: %s already started", ErrConfig, c.cfg.Name)
	}
	if err := c.reset(); err != nil {
		return err
	}
	if c.has64 {
		c.write(regCtrlDSSeg, 0) // every descriptor is below 4 GiB
	}
	c.write(regPeriodic, c.framesPA)
	c.write(regAsync, c.head.pa)
	c.write(regUSBSts, stsAck) // clear stale causes
	c.write(regUSBIntr, intrEnabled)
	// ITC 1: interrupt at the end of the microframe a transfer retired
	// in (Linux's default log2_irq_thresh 0). Frame list size 1024.
	c.write(regUSBCmd, 1<<cmdITCShift|cmdPSE|cmdASE|cmdRun)
	if _, ok := c.poll(regUSBSts, stsHalted, 0, haltTimeout); !ok {
		return fmt.Errorf("%w: %s did not leave the halted state", ErrReset, c.cfg.Name)
	}
	c.write(regConfigFlag, configFlagOn)
	time.Sleep(configFlagSettle)
	if c.regs.Read32(regHCSParam)&hcsPPC != 0 {
		for p := 1; p <= c.nports; p++ {
			v := c.read(c.portReg(p))
			c.write(c.portReg(p), v&^portRWC|portPP)
		}
		time.Sleep(powerOnGood)
	}
	c.started = true
	c.dead = false
	return nil
}

// Stop halts the controller and fails every submitted transfer with
// usb.ErrGone. Pipes stay open (and useless) until closed.
func (c *Controller) Stop() {
	c.mu.Lock()
	if !c.started {
		c.mu.Unlock()
		return
	}
	c.started = false
	c.dead = true
	c.write(regUSBIntr, 0)
	c.write(regUSBCmd, c.read(regUSBCmd)&^(cmdRun|cmdPSE|cmdASE))
	_, _ = c.poll(regUSBSts, stsHalted, stsHalted, haltTimeout)
	c.write(regConfigFlag, 0)
	c.mu.Unlock()
	c.failAll()
}

// failAll completes every submitted transfer with usb.ErrGone; the
// controller must no longer run.
func (c *Controller) failAll() {
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	c.mu.Lock()
	done := c.done
	n := 0
	for _, p := range c.pipes {
		for _, x := range p.queue {
			p.retire(x, 0, usb.ErrGone) // buffer synced back, qTDs to the pool
			done[n] = x
			n++
		}
		p.resetQueue()
	}
	c.mu.Unlock()
	c.giveBack(done[:n])
}

func (c *Controller) portReg(port int) uint32 { return regPortSC + 4*uint32(port-1) }

func (c *Controller) checkPort(port int) error {
	if port < 1 || port > c.nports {
		return fmt.Errorf("%w: %s port %d (1..%d)", ErrPort, c.cfg.Name, port, c.nports)
	}
	return nil
}

// speedOf is the speed of the device on an enabled port.
func (c *Controller) speedOf(v uint32) usb.Speed {
	if !c.cfg.IntegratedTT {
		return usb.SpeedHigh // only high-speed devices enable an EHCI port
	}
	switch v >> portPSPDPos & portPSPDMask {
	case 0:
		return usb.SpeedFull
	case 1:
		return usb.SpeedLow
	}
	return usb.SpeedHigh
}

// PortStatus implements usb.HostController.
func (c *Controller) PortStatus(port int) (usb.PortStatus, error) {
	if err := c.checkPort(port); err != nil {
		return usb.PortStatus{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.read(c.portReg(port))
	if v&portRWC != 0 {
		// Writing the change bits back as read clears exactly those.
		c.write(c.portReg(port), v)
	}
	st := usb.PortStatus{
		Connected:      v&portCCS != 0,
		Enabled:        v&portPE != 0,
		ConnectChanged: v&portCSC != 0,
		Overcurrent:    v&portOCA != 0,
		Suspended:      v&portSuspend != 0,
	}
	switch {
	case v&portOwner != 0:
		st.Speed = usb.SpeedFull // the companion's; this controller cannot tell low from full
	case st.Enabled:
		st.Speed = c.speedOf(v)
	case st.Connected && v&portLSMask == portLSK:
		st.Speed = usb.SpeedLow
	}
	return st, nil
}

// ResetPort implements usb.HostController: a 50 ms reset, then the port
// must be enabled (EHCI §4.2.2; Linux ehci-hub.c). A port that stays
// disabled holds a full-speed device (a high-speed one would have
// chirped); a low-speed one is seen from the line state before reset.
// Without an integrated TT such devices belong to the companion
// controller.
func (c *Controller) ResetPort(port int) (usb.Speed, error) {
	if err := c.checkPort(port); err != nil {
		return 0, err
	}
	reg := c.portReg(port)
	c.mu.Lock()
	v := c.read(reg)
	if v&portCCS == 0 {
		c.mu.Unlock()
		return 0, fmt.Errorf("%w: %s port %d: nothing connected", usb.ErrGone, c.cfg.Name, port)
	}
	if !c.cfg.IntegratedTT && v&portLSMask == portLSK {
		err := c.handOff(reg, v, port, usb.SpeedLow)
		c.mu.Unlock()
		return 0, err
	}
	c.write(reg, v&^(portRWC|portPE)|portReset)
	c.mu.Unlock()
	time.Sleep(portResetTime)
	c.mu.Lock()
	c.write(reg, c.read(reg)&^(portRWC|portReset))
	v, ok := c.poll(reg, portReset, 0, portResetDone)
	if !ok {
		c.mu.Unlock()
		return 0, fmt.Errorf("%w: %s port %d: reset did not end", ErrNoEnable, c.cfg.Name, port)
	}
	if v&portPE == 0 {
		var err error
		if c.cfg.IntegratedTT || v&portCCS == 0 {
			err = fmt.Errorf("%w: %s port %d (PORTSC %#x)", ErrNoEnable, c.cfg.Name, port, v)
		} else {
			err = c.handOff(reg, v, port, usb.SpeedFull)
		}
		c.mu.Unlock()
		return 0, err
	}
	sp := c.speedOf(v)
	c.mu.Unlock()
	time.Sleep(resetRecovery)
	return sp, nil
}

// handOff gives the port to the companion controller, if there is one.
func (c *Controller) handOff(reg, v uint32, port int, sp usb.Speed) error {
	if c.ncc == 0 {
		return fmt.Errorf("%w: %s port %d: %s-speed device, no transaction translator and no companion controller",
			ErrCompanion, c.cfg.Name, port, sp)
	}
	c.write(reg, v&^portRWC|portOwner)
	return fmt.Errorf("%w: %s port %d: %s-speed device handed to the companion controller (not driven)",
		ErrCompanion, c.cfg.Name, port, sp)
}

// DisablePort implements usb.HostController.
func (c *Controller) DisablePort(port int) error {
	if err := c.checkPort(port); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	reg := c.portReg(port)
	c.write(reg, c.read(reg)&^(portRWC|portPE))
	return nil
}

// SetPortChange implements usb.HostController.
func (c *Controller) SetPortChange(f func(port int)) { c.onChange.Set(f) }

// Interrupt services the controller; the board connects it to the
// controller's interrupt line (CPU IP3 on the AR71xx family; it flushes
// the USB DDR channel first, see soc/ar71xx).
func (c *Controller) Interrupt() {
	c.Stats.Interrupts.Add(1)
	sts := c.read(regUSBSts) & stsAck
	if sts == 0 {
		c.Stats.Spurious.Add(1)
		return
	}
	c.write(regUSBSts, sts)
	if sts&stsHSE != 0 {
		// A DMA error halted the controller (EHCI §4.15.2.4): nothing
		// it was doing can be trusted.
		c.Stats.HostSystemErrors.Add(1)
		c.mu.Lock()
		c.dead = true
		c.mu.Unlock()
		c.failAll()
		return
	}
	if sts&stsPCD != 0 {
		c.Stats.PortChanges.Add(1)
		if f := c.onChange.Get(); f != nil {
			for p := 1; p <= c.nports; p++ {
				if c.read(c.portReg(p))&(portCSC|portPEC) != 0 {
					f(p)
				}
			}
		}
	}
	if sts&(stsInt|stsErr) != 0 {
		c.service()
	}
}

// service retires completed transfers of every pipe and calls their Done.
func (c *Controller) service() {
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	c.mu.Lock()
	done := c.done // NewTransfer may replace c.done once the lock is dropped
	n := 0
	for _, p := range c.pipes {
		n = p.scan(done, n)
	}
	c.mu.Unlock()
	c.giveBack(done[:n])
}

// giveBack calls Done of each retired transfer, in order.
func (c *Controller) giveBack(xs []*xfer) {
	for i, x := range xs {
		xs[i] = nil
		x.t.Done(x.t)
	}
}

// newQH returns a zeroed qH from the free list or new coherent memory.
func (c *Controller) newQH() (*qh, error) {
	if n := len(c.freeQH); n > 0 {
		q := c.freeQH[n-1]
		c.freeQH = c.freeQH[:n-1]
		return q, nil
	}
	mem, pa, err := c.tag.AllocCoherent(qhSize, c.cfg.DescOrder)
	if err != nil {
		return nil, err
	}
	return &qh{mem: mem, pa: uint32(pa)}, nil
}

// asyncAdvance rings the async-advance doorbell and waits for its answer:
// afterwards the controller holds no pointer to a qH unlinked before the
// ring (EHCI §4.8.2). The answer is USBCMD.IAAD going clear: the
// controller clears it after setting USBSTS.IAA (EHCI §2.3.1), so it
// belongs to this ring, whereas the status bit, which the interrupt
// handler acknowledges, may be an earlier ring's seen late.
func (c *Controller) asyncAdvance() error {
	c.mu.Lock()
	running := c.started && !c.dead
	if running {
		c.write(regUSBCmd, c.read(regUSBCmd)|cmdIAAD)
	}
	c.mu.Unlock()
	if !running {
		return nil // a halted controller walks nothing
	}
	var err error
	deadline := time.Now().Add(advanceTimeout)
	for {
		if c.read(regUSBCmd)&cmdIAAD == 0 || c.read(regUSBSts)&stsHalted != 0 {
			break
		}
		if time.Now().After(deadline) {
			// Like Linux's IAA watchdog, go on: a controller that
			// never answers is dead to the pipe anyway.
			c.Stats.AdvanceTimeouts.Add(1)
			err = fmt.Errorf("%w: %s: no async-advance answer in %v", ErrAdvance, c.cfg.Name, advanceTimeout)
			break
		}
		time.Sleep(pollInterval)
	}
	if err == nil {
		c.Stats.AsyncAdvances.Add(1)
	}
	if c.cfg.SynopsysIAABug {
		c.mu.Lock()
		if c.started && !c.dead {
			c.write(regAsync, c.head.pa)
		}
		c.mu.Unlock()
	}
	return err
}

// frameAdvance waits until the controller has started a new frame twice,
// so no periodic walk that began before the call is still going.
func (c *Controller) frameAdvance() error {
	c.mu.Lock()
	running := c.started && !c.dead
	c.mu.Unlock()
	if !running {
		return nil
	}
	start := c.read(regFrIndex) / frIndexPerTick
	deadline := time.Now().Add(advanceTimeout)
	for {
		if c.read(regUSBSts)&stsHalted != 0 {
			return nil
		}
		if (c.read(regFrIndex)/frIndexPerTick-start)%(1<<11) >= 2 {
			return nil
		}
		if time.Now().After(deadline) {
			c.Stats.AdvanceTimeouts.Add(1)
			return fmt.Errorf("%w: %s: FRINDEX stuck", ErrAdvance, c.cfg.Name)
		}
		time.Sleep(pollInterval)
	}
}
