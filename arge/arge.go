// Package arge drives the gigabit Ethernet MAC built into the Atheros/QCA
// AR71xx family of SoCs (FreeBSD's arge, Linux's ag71xx): descriptor rings
// in DMA memory, zero-copy transmit, receive with interrupt mitigation,
// error recovery, link reprogramming, MIB counters, and the MII management
// bus (MII, an mdio.Bus) that PHY and switch drivers use.
//
// Rings. TX and RX rings (128 and 256 descriptors by default) live in one
// uncached (coherent) block; each descriptor is four words: buffer
// address, control (EMPTY bit 31, MORE bit 24, length), next descriptor,
// padding, and both rings are closed circles the DMA engine follows on its
// own. EMPTY means "owned by software".
//
// Transmit never lets the engine see a partial chain: all descriptors of a
// frame but the first are written (the first still carries EMPTY from when
// it was last reclaimed), a barrier drains the writes, and only then is
// the first descriptor's control word written without EMPTY, followed by a
// barrier and the TX enable that restarts an idle engine. Buffers are
// mapped in place through busdma (zero-copy); on AR71xx/AR913x the
// tag demands 4-byte aligned fragments and on every chip 4-byte-multiple
// non-final fragments, and busdma bounces only the fragments that break
// those rules.
//
// Receive buffers are cache-line aligned and stay mapped; the MAC writes
// at a 2-byte offset on chips that allow it so that the IP header after
// the 14-byte Ethernet header is 4-byte aligned (AR71xx/AR913x
// need 4-byte aligned buffers and get no offset, like Linux). A receive
// pass first finds the completed descriptors, then drains the SoC's DDR
// write buffer for this MAC (so the data of every descriptor seen complete
// is in memory), then syncs, hands each frame to the Receive callback
// (zero-copy: the frame is lent for the duration of the call), re-posts
// the buffer and acknowledges one packet in DMA_RX_STATUS. Descriptors are
// written by hardware and are not trusted: a length beyond the buffer, too
// short for a frame, or unexpected flag bits is counted and dropped.
//
// Interrupts. The board connects the handler (NIC.Interrupt, or
// Driver.Interrupt without the NIC) to the MAC's interrupt line. It masks
// the MAC's interrupt sources and services the rings in passes of at most
// Budget frames, yielding between passes, until a pass finds less than a
// budget's worth of work (NAPI-like), then unmasks. Status counters are acknowledged one packet per descriptor, the
// hardware's semantics. RX overflow and TX underrun/bus errors are cleared
// and the engines restarted where they stopped, so the rings and every
// buffer survive.
package arge

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	gnet "github.com/gowrt/gowrt/net"
)

// SoC is what the driver needs from the SoC around its MAC: the MAC's
// reset line and its clock for a link speed (the board passes the SoC's
// Ethernet unit, *ar71xx.Eth, which implements it and Flusher).
type SoC interface {
	Reset() error
	SetClock(mbps int) error
}

// Flusher drains the SoC's DDR write buffer for this MAC
// (*ar71xx.Eth and *ar71xx.ChannelFlusher implement it).
type Flusher interface {
	Flush() error
}

// Chip is what differs between the MACs of the family's members
// (FreeBSD if_arge.c hardware flags, Linux ag71xx.c per-SoC data); the
// board copies it from the SoC's identification (ar71xx.Info).
type Chip struct {
	// DescLenMask bounds a descriptor's length field (4 KiB-1 up to
	// AR933x, 16 KiB-1 from AR934x).
	DescLenMask uint32
	// TXAlign4 and RXAlign4: DMA buffers must start 4-byte aligned
	// (AR71xx and AR913x).
	TXAlign4, RXAlign4 bool
	// FIFOCfg1..3 are the FIFO_CFG1..3 values for the chip.
	FIFOCfg1, FIFOCfg2, FIFOCfg3 uint32
}

// Defaults.
const (
	DefaultTxRing = 128
	DefaultRxRing = 256
	DefaultBudget = 64
	// MaxFrameLen is what MAX_FRAME_LEN is programmed to (FreeBSD): the
	// longest frame, FCS included, the MAC receives; it drops longer
	// ones and counts them in its rx_oversize counter (Stats.RxOversize).
	// It also bounds the frames Transmit takes.
	MaxFrameLen = 1536
	// MaxTXFrags is the most fragments one frame may have (FreeBSD
	// ARGE_MAXFRAGS).
	MaxTXFrags = 8
	// minTXLen: "TX will hang if DMA transfers ≤ 4 bytes" (Linux).
	minTXLen  = 5
	fcsLen    = 4
	ethHdrLen = 14
	// DefaultTxBounce is how many transmit loads may be bounced at once.
	DefaultTxBounce = 16
)

// Config describes one MAC instance.
type Config struct {
	Unit int             // 0 (GE0) or 1 (GE1): names the rings and buffers
	Regs barrier.Space   // the MAC's registers (0x1900_0000 / 0x1A00_0000)
	Chip Chip            // the SoC variant's MAC parameters
	DMA  busdma.Platform // where rings and buffers come from
	SoC  SoC             // the MAC's reset line and clock
	// Flush drains this MAC's DDR write-buffer channel; nil if none.
	Flush Flusher
	// MII, if set, is reset and clocked at Start (clock select index
	// MDIOClock); on AR71xx only GE0's interface reaches the PHYs.
	MII       *MII
	MDIOClock uint32
	// MAC is the station address.
	MAC [6]byte

	TxRing, RxRing int // descriptors; 0 selects the defaults
	Budget         int // frames per service pass; 0 selects the default
	// TxBounce is how many transmit loads may be bounced at once (0:
	// DefaultTxBounce); each costs one MaxFrameLen buffer.
	TxBounce int

	// Receive is called for every good frame (FCS stripped). The frame
	// is the DMA buffer itself, valid only until Receive returns. It may
	// call Transmit (forwarding), on this or another port.
	Receive func(frame []byte)
	// TXDone is called, with the token given to Transmit, when a frame's
	// buffers are no longer used by the hardware (sent or dropped).
	TXDone func(token uint64)

	// Delay waits; tests replace it. Defaults to time.Sleep.
	Delay func(time.Duration)
}

// Stats are the driver's counters, read without a lock. The per-frame
// ones are gnet.Counters (32-bit atomics: a 64-bit atomic takes the Go
// runtime's global spinlock on 32-bit MIPS); the MIB snapshots below are
// stored whole by UpdateMIB.
type Stats struct {
	TxFrames, TxBytes, TxBounced   gnet.Counter
	TxRingFull, TxRejected         gnet.Counter
	TxUnderruns, TxBusErrors       gnet.Counter
	RxFrames, RxBytes              gnet.Counter
	RxBad                          gnet.Counter // descriptors with an impossible length or flags
	RxOverflows, RxBusErrors       gnet.Counter // events: the receiver stopped
	Interrupts, Passes, FlushFails gnet.Counter
	LinkChanges                    gnet.Counter

	// Frames the MAC dropped before they reached a descriptor, from its
	// MIB counters as of the last UpdateMIB.
	RxOversize  atomic.Uint64 // rx_oversize + rx_jabber: longer than MAX_FRAME_LEN
	RxUndersize atomic.Uint64 // rx_undersize + rx_fragments: runts
	RxErrors    atomic.Uint64 // rx_fcs_errors + rx_alignment_errors + rx_code_errors
	RxDropped   atomic.Uint64 // rx_dropped: no room in the MAC's FIFO or the ring
}

var (
	ErrRingFull  = errors.New("arge: TX ring full")
	ErrStopped   = errors.New("arge: MAC stopped")
	ErrFrameSize = errors.New("arge: frame size out of range")
	ErrConfig    = errors.New("arge: bad configuration")
)

type txSlot struct {
	m     *busdma.Map
	ndesc int
	token uint64
}

// Driver is one arge MAC.
type Driver struct {
	cfg    Config
	r      barrier.Space
	delay  func(time.Duration)
	budget int

	ring     barrier.Space // TX descriptors, then RX descriptors
	ringAddr uint64
	txN, rxN int
	lenMask  uint32

	txTag *busdma.Tag
	rxTag *busdma.Tag
	hz    hazards // wrong-code hook of -tags gowrt_hazard builds; empty otherwise

	txMu                   sync.Mutex
	tx                     []txSlot
	txProd, txCons, txUsed int
	txStopped              bool // set by Stop, cleared by Start (txMu)

	rxMu      sync.Mutex
	rxBuf     [][]byte // CPU view of each whole buffer
	rxMap     []*busdma.Map
	rxOff     int // where the MAC writes inside the buffer
	rxLen     uint32
	rxCons    int
	rxScratch []uint32

	ctlMu sync.Mutex
	link  gnet.LinkState // what SetLink was told; reprogrammed after a MAC reset

	// runMu orders interrupt service against Start and Stop: Service and
	// Interrupt hold it shared and do nothing unless running; Stop takes
	// it exclusively before it touches the engines. Without it, an
	// interrupt handled while Stop runs restarts an engine whose
	// descriptor pointer Stop has just cleared, and the MAC DMAs from
	// address 0.
	runMu   sync.RWMutex
	running bool

	// Stats are the driver's counters.
	Stats Stats

	mibMu   sync.Mutex
	mibLast [len(mibDrops)]uint32 // raw values at the last UpdateMIB
	mibBase bool                  // mibLast holds values read from the MAC
}

// New allocates the rings and buffers and returns a stopped driver.
func New(cfg Config) (*Driver, error) {
	if cfg.Regs == nil || cfg.Chip.DescLenMask == 0 || cfg.DMA == nil || cfg.SoC == nil {
		return nil, fmt.Errorf("%w: Regs, Chip, DMA and SoC are required", ErrConfig)
	}
	if cfg.Unit < 0 || cfg.Unit > 1 {
		return nil, fmt.Errorf("%w: unit %d", ErrConfig, cfg.Unit)
	}
	if cfg.TxRing == 0 {
		cfg.TxRing = DefaultTxRing
	}
	if cfg.RxRing == 0 {
		cfg.RxRing = DefaultRxRing
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	if cfg.TxBounce == 0 {
		cfg.TxBounce = DefaultTxBounce
	}
	if cfg.TxRing < MaxTXFrags+2 || cfg.RxRing < 2 || cfg.Budget < 1 {
		return nil, fmt.Errorf("%w: rings %d/%d budget %d", ErrConfig, cfg.TxRing, cfg.RxRing, cfg.Budget)
	}
	d := &Driver{cfg: cfg, r: cfg.Regs, delay: cfg.Delay, budget: cfg.Budget,
		txN: cfg.TxRing, rxN: cfg.RxRing, lenMask: cfg.Chip.DescLenMask, txStopped: true}
	if d.delay == nil {
		d.delay = time.Sleep
	}
	p := cfg.DMA
	name := fmt.Sprintf("arge%d", cfg.Unit)

	var err error
	d.ring, d.ringAddr, err = p.AllocCoherent(name+"-rings", (d.txN+d.rxN)*DescSize, DescSize, barrier.Native)
	if err != nil {
		return nil, fmt.Errorf("arge: rings: %w", err)
	}
	if d.ringAddr+uint64((d.txN+d.rxN)*DescSize) > 1<<32 {
		return nil, fmt.Errorf("%w: rings above 4 GiB", ErrConfig)
	}

	align := 1
	if cfg.Chip.TXAlign4 {
		align = 4
	}
	// Every non-final fragment must be a multiple of 4 bytes on every
	// chip: FreeBSD (arge_mbuf_chain_is_tx_aligned) applies the rule to
	// all MACs. gowrt's design assumed AR7240+ may not need it
	// (unverified); staying conservative costs a bounce only for odd-length
	// middle fragments.
	d.txTag, err = busdma.NewTag(p, busdma.TagConfig{Name: name + "-tx", Alignment: align, SegLenMultiple: 4,
		MaxSegments: MaxTXFrags, MaxSize: MaxFrameLen, MaxSegSize: MaxFrameLen, AddrLimit: 1<<32 - 1,
		BounceBuffers: cfg.TxBounce})
	if err != nil {
		return nil, err
	}
	d.tx = make([]txSlot, d.txN)
	for i := range d.tx {
		if d.tx[i].m, err = d.txTag.NewMap(); err != nil {
			return nil, err
		}
	}

	// Every RX buffer holds the longest frame MAX_FRAME_LEN lets through
	// (with its FCS) after the offset: the MAC's length limit, not the
	// buffer, decides which frames are too long.
	line := p.LineSize()
	rxAlign := 1
	if cfg.Chip.RXAlign4 {
		rxAlign = 4
	} else {
		d.rxOff = 2 // IP header 4-byte aligned
	}
	stride := (d.rxOff + MaxFrameLen + 3 + line - 1) &^ (line - 1)
	d.rxLen = uint32(stride-d.rxOff) &^ 3
	d.rxTag, err = busdma.NewTag(p, busdma.TagConfig{Name: name + "-rx", Alignment: rxAlign,
		MaxSize: stride, AddrLimit: 1<<32 - 1, BounceBuffers: 1})
	if err != nil {
		return nil, err
	}
	pool, _, err := p.AllocCached(name+"-rxbufs", d.rxN*stride, line)
	if err != nil {
		return nil, fmt.Errorf("arge: RX buffers: %w", err)
	}
	d.rxBuf = make([][]byte, d.rxN)
	d.rxMap = make([]*busdma.Map, d.rxN)
	for i := range d.rxBuf {
		d.rxBuf[i] = pool[i*stride : (i+1)*stride : (i+1)*stride]
		if d.rxMap[i], err = d.rxTag.NewMap(); err != nil {
			return nil, err
		}
		segs, err := d.rxMap[i].Load(d.rxBuf[i], busdma.FromDevice)
		if err != nil {
			return nil, fmt.Errorf("arge: RX buffer %d: %w", i, err)
		}
		if len(segs) != 1 || d.rxMap[i].Bounced != 0 {
			return nil, fmt.Errorf("arge: RX buffer %d not mapped in place", i)
		}
	}
	d.rxScratch = make([]uint32, d.budget)
	return d, nil
}

func (d *Driver) txDesc(i int) uint32 { return uint32(i * DescSize) }
func (d *Driver) rxDesc(i int) uint32 { return uint32((d.txN + i) * DescSize) }

// wr writes a register; the caller issues the barrier that must follow a
// group of writes.
func (d *Driver) wr(off, v uint32) { d.r.Write32(off, v) }

// Start resets and programs the MAC, initialises the rings and enables
// reception and interrupts (FreeBSD arge_reset_mac / arge_init_locked).
func (d *Driver) Start() (err error) {
	// Registered first, so it runs after the unlocks below: the driver is
	// declared running only once it is fully programmed.
	defer func() {
		if err == nil {
			d.runMu.Lock()
			d.running = true
			d.runMu.Unlock()
		}
	}()
	// Lock order is ctl → rx → tx everywhere: a Receive callback (run
	// with rxMu held) may call Transmit.
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	d.rxMu.Lock()
	defer d.rxMu.Unlock()
	d.txMu.Lock()
	defer d.txMu.Unlock()
	d.txStopped = false

	// Count what the MIB counted up to now: the reset may clear it.
	d.mibMu.Lock()
	d.updateMIB()
	d.mibMu.Unlock()
	d.wr(RegMACCfg1, Cfg1SoftReset)
	d.r.Barrier()
	d.delay(20 * time.Microsecond)
	if err := d.cfg.SoC.Reset(); err != nil {
		return err
	}
	d.wr(RegMACCfg1, Cfg1SyncRX|Cfg1RXEnable|Cfg1SyncTX|Cfg1TXEnable)
	d.wr(RegMACCfg2, Cfg2PadCRC|Cfg2LenCheck|Cfg2IfMode10_100)
	d.wr(RegMaxFrameLen, MaxFrameLen)
	d.r.Barrier()
	if d.cfg.MII != nil {
		d.cfg.MII.Reset(d.cfg.MDIOClock)
	}
	d.wr(RegFIFOCfg0, FIFOCfg0All)
	d.wr(RegFIFOCfg1, d.cfg.Chip.FIFOCfg1)
	d.wr(RegFIFOCfg2, d.cfg.Chip.FIFOCfg2)
	d.wr(RegFIFOCfg3, d.cfg.Chip.FIFOCfg3)
	d.wr(RegFIFOCfg4, FIFOCfg4Default)
	d.wr(RegFIFOCfg5, FIFOCfg5Default)
	a1, a2 := StationAddr(d.cfg.MAC)
	d.wr(RegStaAddr1, a1)
	d.wr(RegStaAddr2, a2)
	d.r.Barrier()
	// Count on from the MIB's values after the reset.
	d.mibMu.Lock()
	d.mibBase = false
	d.updateMIB()
	d.mibMu.Unlock()

	if err := d.resetDMA(); err != nil {
		return err
	}
	// TX ring: every descriptor EMPTY (software-owned), linked in a circle.
	for i := 0; i < d.txN; i++ {
		o := d.txDesc(i)
		d.ring.Write32(o+DescBuf, 0)
		d.ring.Write32(o+DescCtrl, DescEmpty)
		d.ring.Write32(o+DescNext, uint32(d.ringAddr)+d.txDesc((i+1)%d.txN))
	}
	d.txProd, d.txCons, d.txUsed = 0, 0, 0
	// RX ring: every buffer handed to the MAC.
	for i := 0; i < d.rxN; i++ {
		if err := d.rxMap[i].Sync(busdma.PreRead); err != nil {
			return err
		}
		o := d.rxDesc(i)
		d.ring.Write32(o+DescBuf, uint32(d.rxMap[i].Segments()[0].Addr)+uint32(d.rxOff))
		d.ring.Write32(o+DescCtrl, DescEmpty|d.rxLen)
		d.ring.Write32(o+DescNext, uint32(d.ringAddr)+d.rxDesc((i+1)%d.rxN))
	}
	d.rxCons = 0
	d.ring.Barrier()
	d.wr(RegTXDesc, uint32(d.ringAddr))
	d.wr(RegRXDesc, uint32(d.ringAddr)+d.rxDesc(0))
	d.wr(RegIntEnable, IntAll)
	d.wr(RegRXCtrl, RXCtrlEnable)
	d.r.Barrier()
	// The reset forgot the link's speed and duplex: program them again.
	if d.link.Up {
		return d.programLink(d.link)
	}
	return nil
}

// resetDMA stops both engines and drains their status (FreeBSD
// arge_reset_dma, Linux ag71xx_dma_reset).
func (d *Driver) resetDMA() error {
	d.wr(RegRXCtrl, 0)
	d.wr(RegTXCtrl, 0)
	d.r.Barrier()
	// Linux polls the enables back to 0 before touching descriptors:
	// clearing them early corrupts memory.
	if _, ok := barrier.Poll32(d.r, RegRXCtrl, RXCtrlEnable, 0, 1000); !ok {
		return errors.New("arge: RX DMA did not stop")
	}
	if _, ok := barrier.Poll32(d.r, RegTXCtrl, TXCtrlEnable, 0, 1000); !ok {
		return errors.New("arge: TX DMA did not stop")
	}
	d.wr(RegRXDesc, 0)
	d.wr(RegTXDesc, 0)
	for i := 0; i < 256; i++ {
		d.r.Barrier()
		rx := d.r.Read32(RegRXStatus) & RXStatusPktRecvd
		tx := d.r.Read32(RegTXStatus) & TXStatusPktSent
		if rx == 0 && tx == 0 {
			break
		}
		if rx != 0 {
			d.wr(RegRXStatus, RXStatusPktRecvd)
		}
		if tx != 0 {
			d.wr(RegTXStatus, TXStatusPktSent)
		}
	}
	d.wr(RegRXStatus, RXStatusOverflow|RXStatusBusError)
	d.wr(RegTXStatus, TXStatusUnderrun|TXStatusBusError)
	d.r.Barrier()
	return d.flush()
}

func (d *Driver) flush() error {
	if d.cfg.Flush == nil {
		return nil
	}
	if err := d.cfg.Flush.Flush(); err != nil {
		d.Stats.FlushFails.Add(1)
		return err
	}
	return nil
}

// Stop disables the engines and interrupts and releases every queued
// transmit buffer (their TXDone runs).
func (d *Driver) Stop() error {
	d.runMu.Lock()
	d.running = false
	d.runMu.Unlock()
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	d.txMu.Lock()
	defer d.txMu.Unlock()
	d.txStopped = true
	d.wr(RegIntEnable, 0)
	d.r.Barrier()
	err := d.resetDMA()
	for d.txUsed > 0 {
		s := &d.tx[d.txCons]
		_ = s.m.Sync(busdma.PostWrite)
		_ = s.m.Unload()
		if d.cfg.TXDone != nil {
			d.cfg.TXDone(s.token)
		}
		d.txCons = (d.txCons + s.ndesc) % d.txN
		d.txUsed -= s.ndesc
	}
	return err
}

// StationAddr returns the STA_ADDR1/STA_ADDR2 values for mac. The two
// reference drivers disagree on the byte order (FreeBSD: ADDR1 =
// mac[2..5] big-endian, ADDR2 = mac[0..1]; Linux: ADDR1 = mac[5..2],
// ADDR2 = mac[1],mac[0] in the top half). We follow Linux: the address
// only matters for the pause frames the MAC sends, and Linux's layout is
// the one exercised by current OpenWrt on every family member.
func StationAddr(mac [6]byte) (uint32, uint32) {
	a1 := uint32(mac[5])<<24 | uint32(mac[4])<<16 | uint32(mac[3])<<8 | uint32(mac[2])
	a2 := uint32(mac[1])<<24 | uint32(mac[0])<<16
	return a1, a2
}
