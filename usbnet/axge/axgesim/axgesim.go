// Package axgesim is a hostile model of the ASIX AX88179 / AX88178A /
// AX88179A USB 3.0/2.0 gigabit Ethernet chip, written from FreeBSD's
// if_axge.c / if_axgereg.h and Linux's ax88179_178a.c, for testing the
// axge driver without hardware. It is a usbsim.Model behind a
// usbsim.Device (Function), which host controller models and usbsim.Host
// drive a packet at a time.
//
// What it reproduces, each the root of one of FreeBSD axge's field bugs:
//
//   - Bulk-in aggregation with RX_BULKIN_QCTRL's timer and size: frames
//     arrive at the link rate into a finite RX FIFO; a bulk-in transfer is
//     ready when the aggregation buffer holds Size KiB or Timer µs have
//     passed since its first frame (the µs unit is inferred: the table's
//     timer × link rate ≈ its size for 10, 100 and 1000-on-USB-2 entries).
//     Until then bulk-in NAKs. Frames that find the FIFO full are dropped
//     and counted, so a too-short timer (many small transfers) or too few
//     transfers in flight shows up as lost frames and fewer frames/s.
//   - Bulk-out: each frame carries the 8-byte header; one whose transfer
//     ends exactly on a max-packet boundary with neither the PAD flag (and
//     its extra byte) nor a zero-length packet leaves the chip waiting
//     for the rest of the transfer: it NAKs every later OUT packet. TX is
//     wedged until a bus reset (the driver's queue fills: ErrTxFull).
//   - Control transfers can fail on demand (STALL in the data or status
//     stage) and can be slow (NAK until a wall-clock delay has passed), so
//     the driver's MII passes sleep inside them and can interleave.
//   - The PHY's state is the truth the model checks the medium word
//     against: an MSR write that disagrees with the PHYSR value the host
//     read last, or with the QCTRL entry written just before it, is a torn
//     media word; a reprogramming (QCTRL write) with no PHY change since
//     the previous one is a link flap.
package axgesim

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// USB IDs and endpoint layout of the modelled chip. The endpoint numbers
// are the model's choice; drivers find them in the descriptors.
const (
	VendorASIX      = 0x0b95
	ProductAX88179  = 0x1790
	ProductAX88178A = 0x178a
	BCD179          = 0x0100
	BCD179A         = 0x0200

	EPInterrupt = 1 // IN, 8-byte status
	EPBulkIn    = 2 // IN, aggregated frames
	EPBulkOut   = 3 // OUT, header + frame
)

// Register offsets and bits, local so the model does not trust the
// driver's constants (values from if_axgereg.h and ax88179_178a.c).
const (
	reqMAC    = 0x01
	reqPHY    = 0x02
	reqFWMode = 0x08

	rPLSR   = 0x02
	rRCR    = 0x0B
	rNIDR   = 0x10
	rMSR    = 0x22
	rEPPRCR = 0x26
	rQCTRL  = 0x2E
	rCLK    = 0x33

	rcrStart   = 0x0080
	rcrPromisc = 0x0001
	msrRE      = 0x0100
	msrGM      = 0x0001
	msrFD      = 0x0002
	msr125     = 0x0008
	msrRFC     = 0x0010
	msrTFC     = 0x0020
	msrPS      = 0x0200
	eppBZ      = 0x0010
	eppIPRL    = 0x0020

	phyAddr   = 3
	phyBMCR   = 0x00
	phyANLPAR = 0x05
	phyPHYSR  = 0x11

	physrLink = 0x0400
	physrFull = 0x2000
	physr1000 = 0x8000
	physr100  = 0x4000

	txPadding = 0x80008000
	txLenMask = 0x1FFFF
	pktDrop   = 1 << 31
	pktGood   = 1 << 11
)

// The bulk-in control table (axge_bulk_size[]) the model checks QCTRL
// writes against, and its power-on value (entry 0, Linux's default).
var (
	qSuper1000 = [5]byte{7, 0x4f, 0x00, 0x12, 0xff}
	qHigh1000  = [5]byte{7, 0x20, 0x03, 0x16, 0xff}
	q100       = [5]byte{7, 0xae, 0x07, 0x18, 0xff}
	qSlow      = [5]byte{7, 0xcc, 0x4c, 0x18, 0x08}
)

// Media is the PHY's link.
type Media struct {
	Up         bool
	SpeedMbps  int
	FullDuplex bool
	Pause      bool // the link partner can pause (ANLPAR bit 10)
}

func (m Media) physr() uint16 {
	if !m.Up {
		return 0
	}
	sr := uint16(physrLink)
	if m.FullDuplex {
		sr |= physrFull
	}
	switch m.SpeedMbps {
	case 1000:
		sr |= physr1000
	case 100:
		sr |= physr100
	}
	return sr
}

func mediaOf(sr uint16) Media {
	if sr&physrLink == 0 {
		return Media{}
	}
	m := Media{Up: true, FullDuplex: sr&physrFull != 0, SpeedMbps: 10}
	switch sr & 0xC000 {
	case physr1000:
		m.SpeedMbps = 1000
	case physr100:
		m.SpeedMbps = 100
	}
	return m
}

// msrFor is the medium word that matches a link (FreeBSD
// axge_miibus_statchg: flow control only when pause was negotiated).
func msrFor(m Media) uint16 {
	msr := uint16(msrRE)
	if m.FullDuplex {
		msr |= msrFD
		if m.Pause {
			msr |= msrTFC | msrRFC
		}
	}
	switch m.SpeedMbps {
	case 1000:
		msr |= msrGM | msr125
	case 100:
		msr |= msrPS
	}
	return msr
}

// Config describes the modelled chip.
type Config struct {
	Product   uint16    // ProductAX88179 (default) or ProductAX88178A
	BCDDevice uint16    // BCD179 (default) or BCD179A
	Speed     usb.Speed // the USB link: SpeedHigh (default), SpeedFull, SpeedSuper
	MAC       [6]byte   // NODE_ID at power-on
	Link      Media     // the PHY's initial state
	// RxFIFO is the chip's receive buffer in bytes (default 64 KiB; the
	// size is the model's assumption, the datasheet's is not public).
	RxFIFO int
	// Seed drives failure injection and control delays.
	Seed uint64
	// Transmitted, if set, sees each frame parsed from bulk-out, with the
	// model's lock held (it must not call the Chip).
	Transmitted func(frame []byte)
	// Now is the model's clock for link-rate arrivals and the
	// aggregation timer. Nil: virtual time, moved by Advance.
	Now func() time.Duration
}

// Stats are what the model saw.
type Stats struct {
	RxFrames      uint64 // frames that reached the FIFO
	RxFIFODrops   uint64 // frames lost because the FIFO was full
	RxOffDrops    uint64 // frames lost with the receiver off or the link down
	BulkInXfers   uint64 // aggregated transfers handed to the host
	TxFrames      uint64 // frames parsed from bulk-out
	TxPadded      uint64 // of which carried the PAD flag
	TxBadHeaders  uint64 // bulk-out data that did not parse
	TxWedges      uint64 // times bulk-out wedged on a packet boundary
	ControlFails  uint64 // control transfers failed on demand
	PHYSRReads    uint64
	MSRWrites     uint64
	Reprograms    uint64 // QCTRL writes
	Flaps         uint64 // reprograms with no PHY change since the last one
	TornMedia     uint64 // MSR words that match neither the last PHYSR read nor the last QCTRL
	MSRMismatch   uint64 // MSR writes (after the first PHYSR read) that do not match the PHY at that moment
	PHYChanges    uint64 // real link transitions (SetLink)
	FirmwareModes uint64 // firmware-mode requests seen
}

// Chip is the model. Its methods are safe for concurrent use.
type Chip struct {
	mu  sync.Mutex
	cfg Config
	rng *rand.Rand

	dev *usbsim.Device

	// Registers.
	plsr     uint8
	rcr      uint16
	nid      [6]byte
	msr      uint16
	epprcr   uint16
	qctrl    [5]byte
	clk      uint8
	fwMode   int
	phy      Media
	bmcr     uint16
	lastRead *Media // PHY state the host read last (nil before one)
	lastQ    *[5]byte
	reprogAt uint64 // PHYChanges at the last reprogram
	reprog   bool

	// Fault injection.
	failRate      float64
	failReadsOnly bool
	failNext      int
	virtualNow    time.Duration

	// RX aggregation.
	load      *source
	fifoBytes int
	open      aggBuf
	ready     [][]byte
	sendOff   int
	sendZLP   bool

	// Bulk-out.
	txBuf    []byte
	txWedged bool
	txPend   bool // last packet was full and ended a frame: waiting for the transfer's end

	// Link status on the interrupt endpoint.
	intrPending bool

	stats Stats
}

// New makes a chip in its power-on state (defaults filled in).
func New(cfg Config) *Chip {
	if cfg.Product == 0 {
		cfg.Product = ProductAX88179
	}
	if cfg.BCDDevice == 0 {
		cfg.BCDDevice = BCD179
	}
	if cfg.Speed == usb.SpeedUnknown {
		cfg.Speed = usb.SpeedHigh
	}
	if cfg.RxFIFO == 0 {
		cfg.RxFIFO = 64 << 10
	}
	c := &Chip{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0xa88179)), phy: cfg.Link}
	switch cfg.Speed {
	case usb.SpeedSuper:
		c.plsr = 0x04
	case usb.SpeedHigh:
		c.plsr = 0x02
	default:
		c.plsr = 0x01
	}
	c.powerOn()
	c.dev = c.newDevice()
	return c
}

func (c *Chip) powerOn() {
	c.nid = c.cfg.MAC
	c.qctrl = qSuper1000
	c.rcr, c.msr, c.epprcr, c.clk = 0, 0, 0, 0
	c.fwMode = 1 // a 179A may come up in native mode: the driver must select compat
	c.lastRead, c.lastQ = nil, nil
	c.reprog = false
}

// MaxPacket is the bulk endpoints' wMaxPacketSize at the chip's USB speed.
func (c *Chip) MaxPacket() int {
	switch c.cfg.Speed {
	case usb.SpeedSuper:
		return 1024
	case usb.SpeedHigh:
		return 512
	}
	return 64
}

// Stats returns a snapshot of the counters.
func (c *Chip) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// QCtrl is RX_BULKIN_QCTRL as the driver left it.
func (c *Chip) QCtrl() [5]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.qctrl
}

// MSR is the medium status word as the driver left it.
func (c *Chip) MSR() uint16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msr
}

// FirmwareMode is the AX88179A firmware mode (0 compatible, 1 native).
func (c *Chip) FirmwareMode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fwMode
}

// TxWedged reports whether bulk-out is wedged.
func (c *Chip) TxWedged() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.txWedged
}

// SetLink changes the PHY's state (a cable event or renegotiation).
func (c *Chip) SetLink(m Media) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m != c.phy {
		c.phy = m
		c.stats.PHYChanges++
		c.intrPending = true
	}
}

// Link is the PHY's state.
func (c *Chip) Link() Media {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phy
}

// FailControl makes each later vendor request fail with probability
// rate (a STALL in its data or status stage); with readsOnly, only
// register and PHY reads fail.
func (c *Chip) FailControl(rate float64, readsOnly bool) {
	c.mu.Lock()
	c.failRate, c.failReadsOnly = rate, readsOnly
	c.mu.Unlock()
}

// FailNextControl makes the next n control transfers fail.
func (c *Chip) FailNextControl(n int) {
	c.mu.Lock()
	c.failNext = n
	c.mu.Unlock()
}

// SlowControl makes every control transfer take at least d (wall clock):
// the chip NAKs its data and status stages until then, so the host's
// caller sleeps inside the transfer and other callers' requests queue.
func (c *Chip) SlowControl(d time.Duration) { c.dev.SlowControl(0, d) }

func (c *Chip) now() time.Duration {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return c.virtualNow
}

// Advance moves virtual time to t (a no-op with Config.Now): frames due
// by then arrive and aggregation timers that expired close their buffers.
func (c *Chip) Advance(t time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t > c.virtualNow {
		c.virtualNow = t
	}
	c.catchUp()
}

// Now is the model's current time.
func (c *Chip) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now()
}
