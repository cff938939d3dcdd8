// Package pcnet drives the AMD PCnet-PCI family (Am79C970A PCnet-PCI II, as
// QEMU emulates it on malta, and its successors) and implements the gowrt
// net.NIC contract.
//
// The chip runs in software style 2 (32-bit descriptors). The init block and
// both descriptor rings live in coherent memory from a busdma tag, accessed
// through a little-endian barrier.Space, so the layout is the chip's on
// either CPU byte order. Each ring slot owns a cached, cache-line aligned
// buffer loaded once in a busdma map; every hand-over is bracketed by the
// map's Sync. Descriptors are handed to the chip by writing the word with
// the OWN bit last, after a barrier, so the chip never sees OWN on a
// half-written descriptor; received descriptors are read only after OWN is
// seen clear, and their buffers only after a POSTREAD sync.
//
// Receive lends each frame to the handler in its ring buffer, for the
// duration of Handler.Receive, and gives the buffer back to the chip
// afterwards: the driver copies nothing (a handler that keeps a frame
// copies it, as the net contract says). A handler that implements
// net.BufHandler may keep the buffer instead (net.RxBuf.Keep): the slot is
// refilled from a pool of spare buffers (Config.RxSpares) and the kept
// buffer returns to the pool when its holder releases it. Transmit copies
// the frame into the slot's buffer and releases the caller's TxBuf at
// once, so the caller's memory is never DMA'd and a full ring is
// reported, not waited on; the exception is a buffer kept from a pcnet on
// the same DMA platform (net.CapTxRxBuf), which the chip sends from where
// it was received, and which is released at TX completion.
//
// The driver has the shape the net contract describes: the board connects
// NIC.Interrupt to the chip's interrupt line (PCI INTx is level-triggered,
// so the board sets the line to level first), and the counters in
// NIC.Stats are read without a lock. A link-state poll runs beside
// the interrupt, since the chip raises none on a link change; it doubles
// as a watchdog for lost interrupts.
//
// Facts: AMD Am79C970A datasheet (registers, CSR0 bits, descriptor and init
// block layout), QEMU hw/net/pcnet.c and pcnet-pci.c (WIO offsets, SWSTYLE 2
// behaviour, the 4-byte FCS included in the RX message count, ONES nibble
// check), QEMU hw/mips/malta.c (the NIC in slot 11).
package pcnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/inetsum"
)

// Frame sizes.
const (
	minFrame = 60   // without FCS: the chip pads only with APAD_XMT; we pad
	maxFrame = 1518 // 1500 + header + one VLAN tag
	fcsLen   = 4
	bufSize  = 1536 // per-slot buffer
	// txAlign is where a copied frame starts in its TX slot's buffer
	// (the chip takes a buffer at any byte address): two bytes in, a
	// TCP/IP frame's payload (after 14 + 20 + 20 or 32 header bytes)
	// starts on a word, so the copy of it from a word-aligned buffer
	// (gVisor's, the stack's send queue) moves whole words: on mips32
	// Go's memmove copies an unaligned source a third slower.
	txAlign = 2
	// rxAlign is where the chip writes a received frame in its buffer,
	// for the same reason (Linux's NET_IP_ALIGN): the payload of a TCP
	// segment for the router then starts on a word, and so does the
	// stack's copy of it, which the reader's copy then moves whole words
	// from.
	rxAlign = 2
)

// Config describes one chip.
type Config struct {
	// Regs is the I/O (or memory) BAR, RegSize bytes, little-endian.
	Regs barrier.Space
	// DMA is the platform DMA memory comes from (mipsdma on bare metal,
	// hwsim's Memory in tests).
	DMA busdma.Platform
	// RxRing and TxRing are the ring sizes: powers of two, 2..512
	// (default 128 and 64: QEMU's slirp delivers bursts of a TCP window
	// faster than the handler goroutine is scheduled, and a 64-slot ring
	// missed frames in TestPcnetQEMU).
	RxRing, TxRing int
	// Promiscuous receives every frame, not only those for the station
	// address, broadcast and multicast: a bridge port needs it.
	Promiscuous bool
	// LinkPoll is the link-state poll period (default 500 ms).
	LinkPoll time.Duration
	// RxSpares is how many receive buffers beyond the ring a handler may
	// keep at once (net.RxBuf.Keep), each taking a kept buffer's place
	// in the ring: default TxRing (a TX ring's worth of frames forwarded
	// without copying, on a chip like this one), negative for none. At
	// most 4096.
	RxSpares int
}

// Stats are the driver's counters, read without a lock: gnet.Counters,
// whose Add is a 32-bit atomic (a 64-bit one takes the runtime's global
// spinlock on 32-bit MIPS). The per-frame ones are added in batches:
// RxFrames and RxBytes after each reap of the RX ring, TxFrames, TxBytes
// and TxFromRx when the TX doorbell rings (at the latest when the service
// pass that queued the frames ends).
type Stats struct {
	RxFrames, RxBytes, RxErrors, RxDropped, Missed gnet.Counter
	TxFrames, TxBytes, TxErrors, TxFull            gnet.Counter
	// TxFromRx counts frames sent straight from a kept receive buffer,
	// without a copy (they are in TxFrames too).
	TxFromRx gnet.Counter
	// RxKeepEmpty counts refused RxBuf.Keep calls: no spare buffer was
	// free (the frame was forwarded by copy instead).
	RxKeepEmpty           gnet.Counter
	Interrupts, MemErrors gnet.Counter
	// Rescued counts link-poll ticks that found interrupt causes pending
	// with no interrupt serviced since the previous tick and no service
	// pass running, and serviced them: a lost or late interrupt costs at
	// most one poll period.
	Rescued gnet.Counter
}

// Errors.
var (
	ErrChip    = errors.New("pcnet: chip not recognised")
	ErrConfig  = errors.New("pcnet: bad configuration")
	ErrInit    = errors.New("pcnet: initialisation did not complete")
	ErrStopped = errors.New("pcnet: stopped")
	ErrSize    = errors.New("pcnet: frame size")
)

// slot is a TX ring slot: its own buffer, which Transmit copies frames
// into, or a kept receive buffer the chip reads in its place.
type slot struct {
	buf   []byte
	m     *busdma.Map
	pa    uint32
	paEnc uint32 // pa as the descriptor holds it (descRing.enc)
	loan  *rxBuf // the kept receive buffer the slot's descriptor points at
	// preWrite is the map's PreWrite of what Transmit copied in, bound
	// once (TX slots only).
	preWrite busdma.RangeSync
}

// rxBuf is one receive buffer. It is in the ring (rxInRing), lent to a
// ReceiveBuf call (rxLent), kept by the handler (rxKept: as a TxBuf,
// perhaps in a TX ring) or a spare in its NIC's pool (rxSpare). It is the
// net.RxBuf of the frames it holds and, once kept, their TxBuf.
type rxBuf struct {
	owner *NIC
	buf   []byte
	m     *busdma.Map
	// The map's per-frame syncs, bound once (busdma.RangeSync): the
	// PostRead of what the CPU reads, the PreWrite of what it wrote.
	postRead, preWrite busdma.RangeSync
	pa                 uint32
	paEnc              uint32 // pa as a descriptor holds it (descRing.enc)
	state              uint8
	slot               int // the ring slot it was lent from
	// fresh: the buffer has not been handed to the chip since it was
	// allocated, and the CPU may have written (zeroed) any of it.
	fresh bool
	// rewritten is how many of the frame's first bytes the handler may
	// have written (Rewrite) while the buffer was lent: written back
	// when it is kept or re-armed.
	rewritten int
	// readable is how many of the frame's first bytes the CPU may read:
	// the head the receive path invalidated (NIC.headLen), or the
	// whole frame once Frame, or a Rewrite or KeepWith past the head,
	// invalidated the rest. Either ending on a line boundary of the
	// buffer or the frame's end, so the rest never shares a line with
	// bytes the handler may have written.
	readable int
	frame    [1][]byte // Segments while kept
	next     *rxBuf    // the next spare in the pool's lists
}

const (
	rxInRing uint8 = iota
	rxLent
	rxKept
	rxSpare
)

// rxPool holds the spare receive buffers. Only the receive path takes
// them (Keep, under rxMu); kept buffers come back from whichever
// goroutine releases them (another NIC's TX completion). Returns go onto
// a lock-free stack (one compare-and-swap), which the receive path empties
// whole into its own list when that runs dry: taking every entry at once
// is what makes the stack safe without ABA protection, as no entry is
// ever popped alone. A mutex made it two lock round trips per forwarded
// frame; the pool never allocates.
type rxPool struct {
	free     *rxBuf                // the receive path's own spares, linked by next
	returned atomic.Pointer[rxBuf] // released buffers, linked by next
}

// get returns a spare, or nil if there is none. Callers hold rxMu.
func (p *rxPool) get() *rxBuf {
	b := p.free
	if b == nil {
		if b = p.returned.Swap(nil); b == nil {
			return nil
		}
	}
	p.free, b.next = b.next, nil
	return b
}

// put returns b to the pool; any goroutine may call it.
func (p *rxPool) put(b *rxBuf) { p.putChain(b, b) }

// putChain returns the buffers linked by next from head to tail, one
// compare-and-swap for all of them; any goroutine may call it.
func (p *rxPool) putChain(head, tail *rxBuf) {
	for {
		top := p.returned.Load()
		tail.next = top
		if p.returned.CompareAndSwap(top, head) {
			return
		}
	}
}

// releaseChain gathers kept buffers a TX completion releases, so that
// those of one NIC go back to its pool in one putChain rather than one
// Release each (an interface call and a compare-and-swap, about 40
// instructions per forwarded frame on mips32, natbench).
type releaseChain struct{ head, tail *rxBuf }

// add releases b into the chain, flushing the chain first if it holds
// another NIC's buffers.
func (c *releaseChain) add(b *rxBuf) {
	b.spare()
	if c.head != nil && c.head.owner != b.owner {
		c.flush()
	}
	if c.head == nil {
		c.tail = b
	}
	b.next, c.head = c.head, b
}

// flush returns the chain's buffers to their pool.
func (c *releaseChain) flush() {
	if c.head != nil {
		c.head.owner.pool.putChain(c.head, c.tail)
		c.head, c.tail = nil, nil
	}
}

// add gives the pool a spare before the NIC starts.
func (p *rxPool) add(b *rxBuf) { p.free, b.next = b, p.free }

// Keep implements net.RxBuf: a spare takes the buffer's ring slot and the
// buffer becomes the caller's TxBuf.
func (b *rxBuf) Keep() gnet.TxBuf {
	if b.state != rxLent {
		return nil
	}
	n := b.owner
	if n.hz.keepInRing() { // false in the shipped build
		b.state, n.kept = rxKept, true
		b.writeBack()
		return b
	}
	s := n.pool.get()
	if s == nil {
		n.Stats.RxKeepEmpty.Add(1)
		return nil
	}
	s.state = rxInRing
	n.rx[b.slot] = s
	b.state, n.kept = rxKept, true
	b.writeBack()
	return b
}

// Rewrite implements net.RxBuf: the frame's first n bytes, which the
// handler writes in place; they are written back from the cache when the
// buffer is kept (the chip sends them) or, if it is not, before the
// buffer is re-armed (a dirty line evicted later would overwrite what the
// chip receives into it).
func (b *rxBuf) Rewrite(n int) []byte {
	f := b.frame[0]
	if b.state != rxLent || n < 0 || n > len(f) {
		return nil
	}
	if n > b.readable {
		b.Frame() // a line the CPU writes must hold the chip's data
	}
	b.rewritten = max(b.rewritten, n)
	return f[:n:n]
}

// Frame implements net.RxBuf: the PostRead invalidate of the frame's
// lines past the head, which reapRx left for whoever reads them. Only
// the receive path calls it while the buffer is lent; a kept buffer's
// holder, through Segments.
func (b *rxBuf) Frame() []byte {
	f := b.frame[0]
	if b.readable < len(f) && (b.state == rxLent || b.state == rxKept) {
		_ = b.postRead.Sync(rxAlign+b.readable, len(f)-b.readable)
		b.readable = len(f)
	}
	return f
}

// writeBack cleans the lines Rewrite lent out.
func (b *rxBuf) writeBack() {
	if b.rewritten != 0 {
		_ = b.preWrite.Sync(rxAlign, b.rewritten)
		b.rewritten = 0
	}
}

// KeepWith implements net.RxBuf: Keep, with head written over the
// frame's start and written back from the cache, so the lines are clean
// again (the chip reads them, and the buffer's re-arm needs no PreRead).
func (b *rxBuf) KeepWith(head []byte) gnet.TxBuf {
	if b.state != rxLent || len(head) > len(b.frame[0]) {
		return nil
	}
	if len(head) > b.readable {
		b.Frame() // the line head ends in must hold the chip's data
	}
	t := b.Keep()
	if t != nil {
		copy(b.buf[rxAlign:], head)
		_ = b.preWrite.Sync(rxAlign, len(head))
	}
	return t
}

// Segments implements net.TxBuf for a kept buffer: the whole frame,
// readable (Frame). Transmit sends a buffer of a NIC on its DMA platform
// without asking for them.
func (b *rxBuf) Segments() [][]byte {
	b.Frame()
	return b.frame[:]
}

// Len implements net.TxBuf.
func (b *rxBuf) Len() int { return len(b.frame[0]) }

// Release implements net.TxBuf: the buffer goes back to its NIC's pool.
// It may run on any goroutine (another NIC's TX completion), and as soon
// as the holder passed the buffer on, even before ReceiveBuf returns.
func (b *rxBuf) Release() {
	b.spare()
	b.owner.pool.put(b)
}

// spare marks a released buffer a spare, holding no frame.
func (b *rxBuf) spare() {
	b.state = rxSpare
	b.frame[0] = nil
}

// NIC is one PCnet chip. It implements net.NIC.
type NIC struct {
	cfg  Config
	regs barrier.Space
	mac  gnet.MAC
	part uint16
	// headLen is how many of a lent frame's first bytes the receive
	// path makes readable: net.RxHeadLen at least, up to the end of a
	// cache line (the frame starts rxAlign bytes into its buffer), so
	// that the rest never shares a line with the head, which a handler
	// may write (Rewrite).
	headLen int

	ib   barrier.Space // init block
	rxd  descRing      // RX descriptors
	txd  descRing
	ibPA uint32
	rxPA uint32
	txPA uint32
	rx   []*rxBuf // the buffer in each RX slot
	tx   []slot
	pool rxPool

	regMu sync.Mutex // RAP/RDP pairs
	// rap is the value the RAP holds (guarded by regMu): the RAP keeps
	// it until written again, so a CSR access to the same register as
	// the last one writes only RDP. On QEMU each port access is an exit
	// into the device model, and the hot path (CSR0: the doorbell, the
	// interrupt's status and acknowledge) then costs half as many.
	rap   uint16
	svcMu sync.Mutex // one service pass at a time (interrupt or watchdog)

	txMu           sync.Mutex
	txHead, txTail int // next to fill, oldest not reclaimed
	txUsed         int
	unrung         int         // frames queued since the doorbell last rang
	txBatch        int         // most frames queued before the doorbell rings
	owed           atomic.Bool // frames are queued that the doorbell has not announced
	txCount        txCount     // Stats not yet added: counted once per doorbell

	rxMu   sync.Mutex // serialises RX ring and calls into h
	rxHead int
	kept   bool // the buffer lent to ReceiveBuf was kept
	// rxUndone: the service pass delivered frames to bh and owes it a
	// ReceiveDone.
	rxUndone bool

	h  gnet.Handler
	bh gnet.BufHandler // h, if it can keep buffers
	// dma is cfg.DMA's pointer (nil if its type is not a pointer, as
	// every Platform is): Transmit recognises a kept buffer of a chip on
	// its own platform by it. Comparing the interfaces themselves calls
	// the runtime (about 60 instructions per frame on mips32, natbench).
	dma     unsafe.Pointer
	started bool
	running atomic.Bool // started and not stopped: Interrupt services the chip
	stopped atomic.Bool
	link    atomic.Bool
	stop    chan struct{}
	wg      sync.WaitGroup

	lastRescue atomic.Pointer[string] // the chip and controller at the last rescue

	hz hazards // wrong-code hook of -tags gowrt_hazard builds; empty otherwise

	Stats Stats
}

// New resets the chip, identifies it, reads its station address and sets
// up the init block and rings. The chip is initialised but not started.
func New(cfg Config) (*NIC, error) {
	if cfg.Regs == nil || cfg.DMA == nil {
		return nil, fmt.Errorf("%w: Regs and DMA are required", ErrConfig)
	}
	if cfg.RxRing == 0 {
		cfg.RxRing = 128
	}
	if cfg.TxRing == 0 {
		cfg.TxRing = 64
	}
	if cfg.LinkPoll == 0 {
		cfg.LinkPoll = 500 * time.Millisecond
	}
	switch {
	case cfg.RxSpares == 0:
		cfg.RxSpares = cfg.TxRing
	case cfg.RxSpares < 0:
		cfg.RxSpares = 0
	case cfg.RxSpares > 4096:
		return nil, fmt.Errorf("%w: %d spare receive buffers (at most 4096)", ErrConfig, cfg.RxSpares)
	}
	rl, ok1 := log2(cfg.RxRing)
	tl, ok2 := log2(cfg.TxRing)
	if !ok1 || !ok2 || rl < 1 || tl < 1 || rl > 9 || tl > 9 {
		return nil, fmt.Errorf("%w: ring sizes %d/%d (powers of two, 2..512)", ErrConfig, cfg.RxRing, cfg.TxRing)
	}
	n := &NIC{cfg: cfg, regs: cfg.Regs, stop: make(chan struct{}), txBatch: max(1, min(txBatchMax, cfg.TxRing/4)),
		rap: rapUnknown}
	if v := reflect.ValueOf(cfg.DMA); v.Kind() == reflect.Pointer {
		n.dma = v.UnsafePointer()
	}
	n.reset()
	id := uint32(n.csr(csr89))<<16 | uint32(n.csr(csr88))
	n.part = uint16(id >> 12)
	if _, ok := knownParts[n.part]; !ok {
		return nil, fmt.Errorf("%w: CSR88/89 = %#08x (part %#04x)", ErrChip, id, n.part)
	}
	for i := range n.mac {
		n.mac[i] = n.regs.Read8(regAPROM + uint32(i))
	}
	if n.mac.IsZero() || n.mac.IsMulticast() {
		return nil, fmt.Errorf("%w: address PROM holds %v", ErrChip, n.mac)
	}
	if err := n.alloc(rl, tl); err != nil {
		return nil, err
	}
	return n, nil
}

func log2(x int) (uint, bool) {
	for i := uint(0); i < 16; i++ {
		if 1<<i == x {
			return i, true
		}
	}
	return 0, false
}

// PartName returns the chip's name.
func (n *NIC) PartName() string { return knownParts[n.part] }

func (n *NIC) reset() {
	n.regMu.Lock()
	_ = n.regs.Read16(regReset) // S_RESET: clears the RAP too
	n.regs.Barrier()
	// SWSTYLE 2: 32-bit structures, PCnet-PCI descriptors.
	n.regs.Write16(regRAP, bcr20)
	n.rap = bcr20
	n.regs.Barrier() // RAP before BDP: posted writes to two ports may swap
	n.regs.Write16(regBDP, bcr20Style2)
	n.regs.Barrier()
	n.regMu.Unlock()
}

// rapUnknown is no register number (the RAP holds 7 bits): what the RAP
// holds before the driver first wrote it.
const rapUnknown = 0xffff

// selectReg points the RAP at register r, unless it points there
// already; regMu held.
func (n *NIC) selectReg(r uint16) {
	if n.rap != r {
		n.regs.Write16(regRAP, r)
		n.rap = r
		n.regs.Barrier() // RAP set before RDP or BDP is accessed
	}
}

func (n *NIC) csr(r uint16) uint16 {
	n.regMu.Lock()
	defer n.regMu.Unlock()
	n.selectReg(r)
	return n.regs.Read16(regRDP)
}

func (n *NIC) setCSR(r, v uint16) {
	n.regMu.Lock()
	defer n.regMu.Unlock()
	n.selectReg(r)
	// Whatever the RAP needed, a barrier before the write: the doorbell
	// (TDMD) must reach the chip after the descriptor it announces, whose
	// OWN store Transmit leaves without a barrier of its own.
	n.regs.Barrier()
	n.regs.Write16(regRDP, v)
	n.regs.Barrier()
}

func (n *NIC) bcr(r uint16) uint16 {
	n.regMu.Lock()
	defer n.regMu.Unlock()
	n.selectReg(r)
	return n.regs.Read16(regBDP)
}

func (n *NIC) alloc(rl, tl uint) error {
	ctag, err := busdma.NewTag(n.cfg.DMA, busdma.TagConfig{Name: "pcnet-desc", Alignment: 16, MaxSize: 512 * descSize, AddrLimit: 0xffffffff, BounceBuffers: 1})
	if err != nil {
		return err
	}
	var pa uint64
	if n.ib, pa, err = ctag.AllocCoherent(initSize+4, barrier.LittleEndian); err != nil {
		return err
	}
	n.ibPA = uint32(pa)
	var rs, ts barrier.Space
	if rs, pa, err = ctag.AllocCoherent(n.cfg.RxRing*descSize, barrier.LittleEndian); err != nil {
		return err
	}
	n.rxPA = uint32(pa)
	if ts, pa, err = ctag.AllocCoherent(n.cfg.TxRing*descSize, barrier.LittleEndian); err != nil {
		return err
	}
	n.txPA = uint32(pa)
	n.rxd, n.txd = newDescRing(rs), newDescRing(ts)
	btag, err := busdma.NewTag(n.cfg.DMA, busdma.TagConfig{Name: "pcnet-buf", Alignment: 4, MaxSize: bufSize, AddrLimit: 0xffffffff, BounceBuffers: 1})
	if err != nil {
		return err
	}
	l := n.cfg.DMA.LineSize()
	if l <= 0 || gnet.RxHeadLen%l != 0 {
		// A lent frame's head would share a line with its rest, which
		// rxBuf.Frame invalidates after the handler wrote the head.
		return fmt.Errorf("%w: cache line of %d bytes does not divide net.RxHeadLen", ErrConfig, l)
	}
	n.headLen = (rxAlign+gnet.RxHeadLen+l-1)/l*l - rxAlign
	mk := func(k int, dir busdma.Dir) ([]slot, error) {
		s := make([]slot, k)
		for i := range s {
			b, err := btag.Alloc(bufSize)
			if err != nil {
				return nil, err
			}
			m, err := btag.NewMap()
			if err != nil {
				return nil, err
			}
			segs, err := m.Load(b, dir)
			if err != nil {
				return nil, err
			}
			if len(segs) != 1 {
				return nil, fmt.Errorf("pcnet: ring buffer in %d segments", len(segs))
			}
			pa := uint32(segs[0].Addr)
			// Both rings are on one platform: one encoding.
			s[i] = slot{buf: b, m: m, pa: pa, paEnc: n.rxd.enc(pa)}
		}
		return s, nil
	}
	rxs, err := mk(n.cfg.RxRing+n.cfg.RxSpares, busdma.FromDevice)
	if err != nil {
		return err
	}
	// One backing array for every receive buffer's bookkeeping.
	bufs := make([]rxBuf, len(rxs))
	n.rx = make([]*rxBuf, n.cfg.RxRing)
	for i, s := range rxs {
		// The CPU may have touched any of the buffer (zeroed it).
		bufs[i] = rxBuf{owner: n, buf: s.buf, m: s.m, pa: s.pa, paEnc: n.rxd.enc(s.pa + rxAlign), fresh: true}
		if bufs[i].postRead, err = s.m.BindRange(busdma.PostRead); err != nil {
			return err
		}
		if bufs[i].preWrite, err = s.m.BindRange(busdma.PreWrite); err != nil {
			return err
		}
		if i < len(n.rx) {
			n.rx[i] = &bufs[i]
		} else {
			bufs[i].state = rxSpare
			n.pool.add(&bufs[i])
		}
	}
	if n.tx, err = mk(n.cfg.TxRing, busdma.ToDevice); err != nil {
		return err
	}
	for i := range n.tx {
		s := &n.tx[i]
		if s.preWrite, err = s.m.BindRange(busdma.PreWrite); err != nil {
			return err
		}
		s.buf, s.pa = s.buf[txAlign:], s.pa+txAlign
		s.paEnc = n.txd.enc(s.pa)
	}
	// Init block: promiscuous off, all multicast accepted (LADRF all ones:
	// IPv6 neighbour discovery needs multicast; the stack filters).
	mode := uint32(0)
	if n.cfg.Promiscuous {
		mode = modePROM
	}
	n.ib.Write32(ibMode, mode|uint32(rl)<<20|uint32(tl)<<28)
	m := n.mac
	n.ib.Write32(ibPADR, uint32(m[0])|uint32(m[1])<<8|uint32(m[2])<<16|uint32(m[3])<<24)
	n.ib.Write32(ibPADR+4, uint32(m[4])|uint32(m[5])<<8)
	n.ib.Write32(ibLADRF, 0xffffffff)
	n.ib.Write32(ibLADRF+4, 0xffffffff)
	n.ib.Write32(ibRDRA, n.rxPA)
	n.ib.Write32(ibTDRA, n.txPA)
	for i := range n.rx {
		n.rxd.write32(uint32(i*descSize)+dMisc, 0)
		n.giveRx(i, true)
	}
	for i := range n.tx {
		// Owned by the driver; Transmit fills in the address.
		n.txd.write32(uint32(i*descSize)+dAddr, 0)
		n.txd.write32(uint32(i*descSize)+dCtl, 0)
	}
	n.ib.Barrier()
	return nil
}

// giveRx hands RX slot i (back) to the chip, with the buffer now in it.
//
// Only a fresh buffer gets the PreRead invalidate. Since its first
// hand-over the CPU has only read the buffer (the net contract forbids
// writing a received frame, kept or not), so none of its lines can be
// dirty, and the PostRead invalidate over the part of each received frame
// the CPU then reads (the head, and the rest only if asked: rxBuf.Frame)
// drops any clean line the CPU held across the transfer before the CPU
// reads it: busdma's rule for re-arming a buffer the CPU never wrote.
// Lines past the head that the CPU read during an earlier frame may stay
// cached, clean and stale, for several frames: nobody reads them
// without a PostRead first, and a clean line is never written back over
// what the chip wrote.
//
// The chip writes only the status half of the control word and the
// message count (Am79C970A datasheet, "Receive Descriptors": RMD0, the
// buffer address, is the host's; Linux's pcnet32 re-arms a descriptor by
// writing BCNT and OWN alone), so only a buffer that moved into the slot
// (moved) needs its address written; the message count is the chip's
// and is read only after it cleared OWN.
func (n *NIC) giveRx(i int, moved bool) {
	s := n.rx[i]
	if s.fresh {
		_ = s.m.Sync(busdma.PreRead)
		s.fresh = false
	}
	d := uint32(i * descSize)
	if moved {
		n.rxd.writeEnc(d+dAddr, s.paEnc)
	}
	// The chip must see the address before OWN, and the CPU be done
	// reading the buffer. (reapRx relies on this barrier, issued on
	// every call, to order its read of the next descriptor's status
	// before the rest of that descriptor.)
	n.rxd.barrier()
	n.rxd.write32(d+dCtl, uint32(descOWN)<<16|uint32(bcnt(bufSize-rxAlign)))
}

// bcnt is the BCNT field for a length: two's complement in bits 11:0, ones
// in 15:12 (the chip checks the ONES nibble).
func bcnt(n int) uint16 { return uint16(-n)&mcntMask | bcntOnes }

// MACAddress implements net.NIC.
func (n *NIC) MACAddress() gnet.MAC { return n.mac }

// MTU implements net.NIC.
func (n *NIC) MTU() int { return gnet.DefaultMTU }

// Capabilities implements net.NIC: Transmit copies the frame into the
// ring slot's buffer and releases it before it returns (CapTxCopy), from
// any number of segments (CapScatterGather: the copy gathers them).
// It sends a buffer kept from a pcnet on the same DMA platform without
// copying it (CapTxRxBuf).
func (n *NIC) Capabilities() gnet.Capabilities {
	return gnet.CapTxCopy | gnet.CapScatterGather | gnet.CapTxRxBuf | gnet.CapTxChecksumCopy
}

// Link implements net.NIC. The PCnet-PCI II reports no speed; it is a
// 10 Mbit/s part on real hardware (QEMU does not throttle).
func (n *NIC) Link() gnet.LinkState {
	if n.linkUp() {
		return gnet.LinkState{Up: true, SpeedMbps: 10, FullDuplex: true}
	}
	return gnet.LinkState{}
}

func (n *NIC) linkUp() bool { return n.bcr(bcr4)&bcr4LinkStatus != 0 }

// Start implements net.NIC: it loads the init block, starts the chip with
// interrupts enabled and begins delivering to h.
func (n *NIC) Start(h gnet.Handler) error {
	if h == nil {
		return fmt.Errorf("%w: nil handler", ErrConfig)
	}
	if n.started {
		return fmt.Errorf("%w: started twice", ErrConfig)
	}
	n.started = true
	n.h = h
	n.bh, _ = h.(gnet.BufHandler)
	n.setCSR(csr1, uint16(n.ibPA))
	n.setCSR(csr2, uint16(n.ibPA>>16))
	n.setCSR(csr3, 0) // no interrupt masked
	n.setCSR(csr0, csr0INIT)
	ok := false
	for i := 0; i < 100000; i++ {
		if n.csr(csr0)&csr0IDON != 0 {
			ok = true
			break
		}
	}
	if !ok {
		return fmt.Errorf("%w: CSR0 %#04x", ErrInit, n.csr(csr0))
	}
	register(n, true)
	n.running.Store(true)
	n.setCSR(csr0, csr0IDON|csr0STRT|csr0IENA)
	n.rxMu.Lock()
	n.link.Store(n.linkUp())
	n.h.LinkChanged(n.Link())
	n.rxMu.Unlock()
	n.wg.Add(1)
	go n.pollLink()
	return nil
}

func (n *NIC) pollLink() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.LinkPoll)
	defer t.Stop()
	var irqs uint64
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		// Watchdog: causes pending, no interrupt taken for a whole period
		// and no service pass running (a long pass delivering a burst is
		// not a lost interrupt) means the interrupt was lost on its way
		// (or the line is stuck masked); service the chip from here.
		if i := n.Stats.Interrupts.Load(); i == irqs && n.svcMu.TryLock() {
			if c := n.csr(csr0); c&csr0INTR != 0 {
				n.Stats.Rescued.Add(1)
				// What the chip showed, for State.
				d := fmt.Sprintf("csr0 %#04x", c)
				n.lastRescue.Store(&d)
				n.serviceLocked()
			}
			n.svcMu.Unlock()
		}
		irqs = n.Stats.Interrupts.Load()
		up := n.linkUp()
		if up != n.link.Load() {
			n.link.Store(up)
			n.rxMu.Lock()
			if !n.stopped.Load() {
				n.h.LinkChanged(n.Link())
			}
			n.rxMu.Unlock()
		}
	}
}

// Interrupt is the chip's interrupt handler (an intr.Handler), which the
// board connects to the chip's line: it acknowledges the causes (keeping
// interrupts enabled), then reaps received frames and finished transmits.
// It loops until no cause is left, so the level line is low when the
// dispatcher unmasks it. Before Start it does nothing (the chip has
// interrupts disabled then); once Stop has begun it only acknowledges.
func (n *NIC) Interrupt() {
	n.svcMu.Lock()
	defer n.svcMu.Unlock()
	if !n.running.Load() {
		if n.stopped.Load() && n.started {
			// Stop has begun but STOP may not have reached the chip,
			// which can still raise a cause: acknowledge it, with
			// interrupts disabled (IENA clear), so the level line
			// falls rather than fires again at every unmask.
			n.setCSR(csr0, n.csr(csr0)&csr0Causes)
		}
		return
	}
	n.serviceLocked()
}

func (n *NIC) serviceLocked() {
	passes.Add(1)
	n.Stats.Interrupts.Add(1)
	for i := 0; i < 16; i++ {
		c := n.csr(csr0)
		if c&csr0Causes == 0 {
			break
		}
		n.setCSR(csr0, c&csr0Causes|csr0IENA)
		if c&csr0MISS != 0 {
			n.Stats.Missed.Add(1)
		}
		if c&(csr0MERR|csr0BABL) != 0 {
			n.Stats.MemErrors.Add(1)
		}
		n.reapRx()
		n.reapTx()
	}
	n.receiveDone()
	endPass()
}

// The TX doorbell (CSR0 TDMD: a register write and two barriers) rings
// once per service pass rather than once per frame. Frames a pass
// forwards are queued on the egress chip without it, and when the pass
// ends it rings every chip that is owed one; a frame queued while no pass
// is running (the router's own traffic) rings at once, as does the
// txBatch-th frame queued without a ring, so the TX ring never fills with
// frames the chip was not told about. A pass on one chip also delays the
// doorbell of a frame another goroutine queues meanwhile, until the pass
// ends.
//
// No doorbell is lost: Transmit records that it owes one (owed) before it
// looks whether a pass is running, and a pass, once it stopped counting
// itself, looks at every chip's owed; with sequentially consistent
// atomics one of the two sees the other.
var (
	passes  atomic.Int32           // service passes in progress, on any chip
	chipsMu sync.Mutex             // serialises writers of chips
	chips   atomic.Pointer[[]*NIC] // started chips, which a pass's end looks at
)

// txCount is what Transmit counted since the doorbell last rang; it is
// added to Stats when the doorbell rings (three atomics per batch, not
// per frame).
type txCount struct{ frames, bytes, fromRx uint32 }

// takeTxCount returns and clears the pending counts; txMu held.
func (n *NIC) takeTxCount() txCount {
	c := n.txCount
	n.txCount = txCount{}
	return c
}

// addTxCount adds counts taken with takeTxCount to Stats.
func (n *NIC) addTxCount(c txCount) {
	if c.frames != 0 {
		n.Stats.TxFrames.Add(c.frames)
		n.Stats.TxBytes.Add(c.bytes)
	}
	if c.fromRx != 0 {
		n.Stats.TxFromRx.Add(c.fromRx)
	}
}

// txBatchMax bounds the frames queued without a doorbell (a quarter of
// the TX ring at most).
const txBatchMax = 16

// endPass ends a service pass and rings the doorbells it owes.
func endPass() {
	passes.Add(-1)
	if cs := chips.Load(); cs != nil {
		for _, c := range *cs {
			if c.owed.Load() {
				c.txMu.Lock()
				c.unrung = 0
				tc := c.takeTxCount()
				c.txMu.Unlock()
				c.ring()
				c.addTxCount(tc)
			}
		}
	}
}

// TxBatchBegin implements net.TxBatcher: until TxBatchEnd, the frames
// Transmit queues wait for the doorbell as a service pass's do (see
// passes), up to txBatch of them. A TCP download's offloaded packet cut
// into frames thus rings once, not once per frame: on QEMU each doorbell
// is an exit into the device model, which then sends what it finds: a
// bulk download from the router ran at 182-205 Mbit/s ringing per frame,
// at 306-360 ringing per packet (XferInstructionsMaltaLE with
// GOWRT_TCPBENCH_REALTIME=1, same machine and run).
func (n *NIC) TxBatchBegin() { passes.Add(1) }

// TxBatchEnd implements net.TxBatcher: it ends the batch as a service
// pass ends, ringing the doorbell of every chip that is owed one.
func (n *NIC) TxBatchEnd() { endPass() }

// ring rings the doorbell if a frame is owed one.
func (n *NIC) ring() {
	if n.owed.Swap(false) && n.running.Load() {
		n.setCSR(csr0, csr0TDMD|csr0IENA)
	}
}

// register adds n to (or, with add false, removes it from) the chips a
// pass's end looks at.
func register(n *NIC, add bool) {
	chipsMu.Lock()
	defer chipsMu.Unlock()
	var cs []*NIC
	if old := chips.Load(); old != nil {
		for _, c := range *old {
			if c != n {
				cs = append(cs, c)
			}
		}
	}
	if add {
		cs = append(cs, n)
	}
	chips.Store(&cs)
}

// reapRx delivers every frame the chip has handed back. It counts them
// once at the end: two atomics per pass instead of per frame.
func (n *NIC) reapRx() {
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	frames, bytes := uint32(0), uint32(0)
	mask := len(n.rx) - 1
	// The status of the descriptor at rxHead. Each one after the first
	// is read before the previous slot's giveRx, whose barrier then
	// orders it before the reads of the rest of its descriptor: a
	// barrier less per frame.
	st := n.rxd.status(uint32(n.rxHead*descSize) + dCtl)
	fenced := false
	for k := 0; k < len(n.rx); k++ {
		i := n.rxHead
		d := uint32(i * descSize)
		if st&descOWN != 0 {
			break
		}
		if !fenced {
			n.rxd.barrier() // read the rest of the descriptor after OWN
		}
		mcnt := int(n.rxd.low12(d + dMisc)) // MCNT, bits 11:0
		s := n.rx[i]
		moved := false // a spare took the slot
		switch {
		case st&descERR != 0 || st&(descSTP|descENP) != descSTP|descENP:
			n.Stats.RxErrors.Add(1)
		case mcnt < gnet.EthHeaderLen+fcsLen || mcnt > bufSize-rxAlign:
			n.Stats.RxErrors.Add(1)
		case n.stopped.Load():
			n.Stats.RxDropped.Add(1)
		default:
			// Only the frame's lines: the chip wrote mcnt bytes, FCS
			// included. A handler that borrows the frame reads any of
			// it; one lent the buffer, its head until it asks for more
			// (rxBuf.Frame): forwarded by DMA, the rest is never read.
			l := mcnt - fcsLen
			frames++
			bytes += uint32(l)
			f := s.buf[rxAlign : rxAlign+l : rxAlign+l]
			if n.bh == nil {
				_ = s.postRead.Sync(rxAlign, l)
				n.h.Receive(f)
				break
			}
			s.readable = min(l, n.headLen)
			_ = s.postRead.Sync(rxAlign, s.readable)
			s.state, s.slot, s.frame[0] = rxLent, i, f
			n.kept = false
			n.bh.ReceiveBuf(f, s)
			// A kept buffer is no longer ours to touch (it may be
			// sent and released already): a spare took its place in
			// n.rx[i].
			if !n.kept {
				s.writeBack()
				s.state, s.frame[0] = rxInRing, nil
			}
			moved = n.kept
		}
		next := (i + 1) & mask
		st = n.rxd.status(uint32(next*descSize) + dCtl)
		n.giveRx(i, moved) // its barrier comes after that read
		fenced = true
		n.rxHead = next
	}
	if frames != 0 {
		n.Stats.RxFrames.Add(frames)
		n.Stats.RxBytes.Add(bytes)
		n.rxUndone = n.bh != nil
	}
}

// receiveDone ends the service pass's receive pass, if it delivered
// frames. One ReceiveDone per service pass, not per reapRx: frames that
// arrive while the pass works are reaped by its next round, and a
// handler that holds frames until ReceiveDone (the netstack Endpoint
// merging TCP segments) merges across the rounds. A bulk upload's
// merged packets then carry more segments, and gVisor's cost per packet
// (about 40 k instructions on mips32) is paid less often.
func (n *NIC) receiveDone() {
	n.rxMu.Lock()
	defer n.rxMu.Unlock()
	if n.rxUndone {
		n.rxUndone = false
		n.bh.ReceiveDone()
	}
}

// checksumPartial returns where the checksum b leaves partial starts and
// where its field is (net.TxChecksum), if it leaves one that lies within
// its l bytes; a frame that asks for a field past its end is sent as it
// is.
func checksumPartial(b gnet.TxBuf, l int) (start, field int, ok bool) {
	c, isPartial := b.(gnet.TxChecksum)
	if !isPartial {
		return 0, 0, false
	}
	start, field, ok = c.ChecksumPartial()
	return start, field, ok && start >= 0 && start <= field && field+2 <= l
}

// reapTx reclaims descriptors the chip has finished with.
func (n *NIC) reapTx() {
	n.txMu.Lock()
	n.reapTxLocked()
	n.txMu.Unlock()
}

// reapTxLocked is reapTx for a caller holding txMu.
func (n *NIC) reapTxLocked() {
	mask := len(n.tx) - 1
	for n.txUsed > 0 {
		// How many descriptors, oldest first, the chip is done with:
		// their status words are read first, then one barrier orders
		// every read before the buffers are reused (loan, PostWrite),
		// instead of a barrier per descriptor.
		done := 0
		for i := n.txTail; done < n.txUsed; i = (i + 1) & mask {
			st := n.txd.status(uint32(i*descSize) + dCtl)
			if st&descOWN != 0 {
				break
			}
			// ERR sums up TMD2's error bits (BUFF, UFLO, LCOL, LCAR,
			// RTRY: Am79C970A datasheet, TMD1; QEMU pcnet.c sets ERR
			// with each of them), so TMD2 is neither read here nor
			// cleared by Transmit: a descriptor read and a write less
			// per frame.
			if st&descERR != 0 {
				n.Stats.TxErrors.Add(1)
			}
			done++
		}
		if done == 0 {
			return
		}
		n.txd.barrier()
		var back releaseChain // kept buffers, back to their NICs' pools
		for ; done > 0; done-- {
			i := n.txTail
			if s := &n.tx[i]; s.loan != nil {
				back.add(s.loan) // what its Release does
				s.loan = nil
			} else {
				_ = s.m.Sync(busdma.PostWrite)
			}
			n.txTail = (i + 1) & mask
			n.txUsed--
		}
		back.flush()
	}
}

// Transmit implements net.NIC. The frame is copied into the ring slot's
// buffer and b is released before Transmit returns, unless b is a
// receive buffer kept from a pcnet on the same DMA platform: the chip
// sends that in place, and it is released once sent.
func (n *NIC) Transmit(b gnet.TxBuf) error {
	l := b.Len()
	if l < gnet.EthHeaderLen || l > maxFrame {
		return fmt.Errorf("%w: %d bytes", ErrSize, l)
	}
	if n.stopped.Load() || !n.started {
		return ErrStopped
	}
	if !n.link.Load() {
		return gnet.ErrLinkDown
	}
	n.txMu.Lock()
	if n.txUsed == len(n.tx) {
		// The interrupt may not have run yet. Reaped here, under the
		// lock already held: at full load the ring is full at every
		// frame, and dropping the lock for reapTx to take it again
		// cost two lock round trips per frame.
		n.reapTxLocked()
		if n.txUsed == len(n.tx) {
			n.txMu.Unlock()
			n.Stats.TxFull.Add(1)
			return gnet.ErrTxFull
		}
	}
	i := n.txHead
	s := &n.tx[i]
	paEnc := s.paEnc
	off := 0
	kept, _ := b.(*rxBuf)
	if kept != nil && l >= minFrame && n.dma != nil && kept.owner.dma == n.dma {
		// A receive buffer of a pcnet on our platform: the chip sends
		// it from where it landed. No PreWrite: the CPU has not written
		// it since it landed (nobody writes a received frame, the net
		// contract says, and Keep and KeepWith wrote back what Rewrite
		// and KeepWith wrote), so memory holds the frame and no line of
		// it can be dirty.
		// Its paEnc is in our rings' encoding: one platform.
		s.loan, paEnc, off = kept, kept.paEnc, l
		n.txCount.fromRx++
	} else {
		kept = nil
		if start, field, ok := checksumPartial(b, l); ok {
			// The copy sums what it moves (net.CapTxChecksumCopy).
			var sum uint16
			off, sum = inetsum.CopyGather(s.buf, b.Segments(), start)
			binary.BigEndian.PutUint16(s.buf[field:], inetsum.Checksum(sum))
		} else {
			for _, seg := range b.Segments() {
				off += copy(s.buf[off:], seg)
			}
		}
		for ; off < minFrame; off++ {
			s.buf[off] = 0
		}
		_ = s.preWrite.Sync(txAlign, off) // the chip reads off bytes
	}
	d := uint32(i * descSize)
	own := uint32(descOWN|descSTP|descENP)<<16 | uint32(bcnt(off))
	early := n.hz.ownFirst() // false in the shipped build
	if early {
		n.txd.write32(d+dCtl, own)
	}
	n.txd.writeEnc(d+dAddr, paEnc)
	n.txd.barrier() // every field before OWN
	if !early {
		n.txd.write32(d+dCtl, own)
	}
	// No barrier after OWN: the doorbell (ring, a CSR write after a
	// barrier of its own) orders it before TDMD, and the chip's own ring
	// poll needs only that the store arrives, which it does.
	n.txHead = (i + 1) & (len(n.tx) - 1)
	n.txUsed++
	n.unrung++
	n.txCount.frames++
	n.txCount.bytes += uint32(l)
	n.owed.Store(true) // before looking for a pass: see passes
	now := n.unrung >= n.txBatch || passes.Load() == 0
	var tc txCount
	if now {
		n.unrung = 0
		tc = n.takeTxCount()
	}
	n.txMu.Unlock()
	if now {
		n.ring()
		n.addTxCount(tc)
	}
	if kept == nil {
		b.Release()
	}
	return nil
}

// State describes the chip and ring state, for diagnostics.
func (n *NIC) State() string {
	n.txMu.Lock()
	th, tt, tu := n.txHead, n.txTail, n.txUsed
	n.txMu.Unlock()
	n.rxMu.Lock()
	rh := n.rxHead
	rs := n.rxd.status(uint32(rh*descSize) + dCtl)
	n.rxMu.Unlock()
	s := fmt.Sprintf("csr0 %#04x rx head %d (status %#04x) tx head %d tail %d used %d; rx %d tx %d txfull %d missed %d irqs %d rescued %d",
		n.csr(csr0), rh, rs, th, tt, tu, n.Stats.RxFrames.Load(), n.Stats.TxFrames.Load(),
		n.Stats.TxFull.Load(), n.Stats.Missed.Load(), n.Stats.Interrupts.Load(), n.Stats.Rescued.Load())
	if r := n.lastRescue.Load(); r != nil {
		s += " (last rescue: " + *r + ")"
	}
	return s
}

// Stop implements net.NIC: the chip is stopped (no more DMA or
// interrupts), a service pass in progress is waited for, and the link poll
// ended. The board may disconnect Interrupt from the line afterwards.
func (n *NIC) Stop() {
	if n.stopped.Swap(true) {
		return
	}
	n.running.Store(false)
	if n.started {
		register(n, false)
	}
	n.setCSR(csr0, csr0STOP)
	n.svcMu.Lock() // an Interrupt pass that began before Stop has ended
	n.svcMu.Unlock()
	// The chip is stopped: kept buffers still queued go back to their
	// owners.
	n.txMu.Lock()
	for i := range n.tx {
		if b := n.tx[i].loan; b != nil {
			n.tx[i].loan = nil
			b.Release()
		}
	}
	tc := n.takeTxCount()
	n.txMu.Unlock()
	n.addTxCount(tc)
	if n.started {
		close(n.stop)
		n.wg.Wait()
	}
}

// Counters implements gnet.CounterReader from the driver's Stats. Missed
// (the chip found no receive buffer) is counted per interrupt that
// reported it, so rx-no-room is a lower bound.
func (n *NIC) Counters() gnet.Counters {
	var c gnet.Counters
	c.RxFrames, c.RxBytes = n.Stats.RxFrames.Load(), n.Stats.RxBytes.Load()
	c.TxFrames, c.TxBytes = n.Stats.TxFrames.Load(), n.Stats.TxBytes.Load()
	c.Drops[gnet.DropRxErrors] = n.Stats.RxErrors.Load()
	c.Drops[gnet.DropRxNoRoom] = n.Stats.Missed.Load()
	c.Drops[gnet.DropTxErrors] = n.Stats.TxErrors.Load()
	return c
}

var (
	_ gnet.NIC           = (*NIC)(nil)
	_ gnet.CounterReader = (*NIC)(nil)
	_ gnet.TxBatcher     = (*NIC)(nil)
)
