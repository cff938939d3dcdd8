// Package vlan splits one NIC that carries IEEE 802.1Q-tagged frames (a
// trunk) into one NIC per VLAN ID: what OpenWrt calls eth0.1 and eth0.2 on
// a router whose single CPU MAC feeds a switch (TP-Link TL-WDR4300:
// AR8327 port 0 is the CPU port, tagged in VLAN 1 for the LAN ports and
// VLAN 2 for the WAN port).
//
// A child (Port) is a gnet.NIC like any driver's, so the bridge, the
// netstack Endpoint or the router use it without knowing it is a VLAN.
//
// Receive. The parent lends the trunk a tagged frame; the trunk looks the
// VID up and hands the child's handler the frame without its tag. The
// borrowed frame may not be written, so the untagged frame is rebuilt in
// one scratch buffer per trunk (the parent's Receive calls are serialised,
// so one is enough): addresses, then everything after the tag. That is
// one copy and no allocation; the child's handler borrows the scratch
// buffer for the duration of its Receive, under the same rules as a
// driver's buffer. Untagged frames are handed over as they are, without a
// copy, if Config.Untagged names their VLAN. Frames for a VID without a
// child, for a child that is not running, malformed frames and untagged
// frames with nowhere to go are dropped and counted, never delivered.
//
// Transmit. A child inserts the tag without copying the payload when the
// parent can gather (CapScatterGather): the parent gets a pooled TxBuf
// whose first segment is a 16-byte header (addresses, TPID, TCI) and whose
// other segments are the child's, minus the 12 address bytes. A parent
// that cannot gather gets one pooled contiguous copy instead. Either way
// the child's TxBuf is released exactly once: by the parent's release of
// the tagged TxBuf (gather), or by the child as soon as the parent took
// the copy. Tagged frames carry PCP 0 and DEI 0.
//
// Frame size. A child's MTU is the parent's, and a full-size child frame
// (MTU + 14 bytes) goes out 4 bytes longer: the parent must accept frames
// of MTU + EthHeaderLen + VLANTagLen bytes (1518 for MTU 1500, FCS
// excluded), as the gnet contract already requires of every NIC (see
// gnet.RxBufSize). arge does: its MAX_FRAME_LEN is 1536 bytes with FCS.
//
// Start and stop. The parent can be started only once (gnet.NIC), so the
// trunk starts it with the first child's Start and stops it when the last
// running child stops; after that the trunk is finished and Start on any
// child fails with ErrStopped. Link state and the MAC address are the
// parent's; link changes reach every running child.
package vlan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	gnet "github.com/gowrt/gowrt/net"
)

// IEEE 802.1Q constants.
const (
	tpid8021Q = 0x8100 // IEEE 802.1Q-2018 table 9-1: C-VLAN tag TPID
	vidMask   = 0x0fff
	// vidReserved is the VID no frame may carry (802.1Q-2018 table 9-2).
	vidReserved = 0x0fff
	// MaxVID is the largest VID a child can have; 0 means priority-tagged
	// (802.1Q-2018 table 9-2), 0xFFF is reserved.
	MaxVID = 4094

	addrLen   = 12                                  // destination + source MAC
	tagHdrLen = addrLen + gnet.VLANTagLen           // addresses + tag: the header segment
	tagEnd    = gnet.EthHeaderLen + gnet.VLANTagLen // offset of the inner type/length field + 2
)

// Errors.
var (
	// ErrStopped: the trunk's parent was stopped when its last running
	// child stopped; no child can start again.
	ErrStopped = errors.New("vlan: trunk stopped")
	// ErrNotRunning: Transmit on a child that is not started (or is
	// stopped).
	ErrNotRunning = errors.New("vlan: port not running")
	// ErrFrameSize: Transmit of a frame shorter than an Ethernet header,
	// or too long to fit a receive buffer once tagged.
	ErrFrameSize = errors.New("vlan: frame size out of range")
)

// Config describes a trunk.
type Config struct {
	// VIDs are the VLANs that get a child, each 1..MaxVID, no duplicates.
	VIDs []uint16
	// Untagged is the VID whose child receives untagged and
	// priority-tagged (VID 0) frames; it must be one of VIDs. 0 drops
	// them (counted in TrunkStats.RxUntagged). Children always transmit
	// tagged frames.
	Untagged uint16
	// Name is the parent's name, for the children's names (Name.VID, as
	// Linux names VLAN devices: eth0.2). Default "trunk".
	Name string
}

// TrunkStats count the received frames no child could be blamed for.
// Together with every child's RxFrames and RxStopped they count every
// frame the parent delivered exactly once.
type TrunkStats struct {
	RxRunt       atomic.Uint64 // shorter than an Ethernet header, or than a tagged one
	RxOversize   atomic.Uint64 // longer than gnet.RxBufSize
	RxBadVID     atomic.Uint64 // tag carries the reserved VID 0xFFF
	RxUnknownVID atomic.Uint64 // VID without a child
	RxUntagged   atomic.Uint64 // untagged or priority-tagged, Config.Untagged is 0
}

// PortStats are one child's counters.
type PortStats struct {
	RxFrames, RxBytes atomic.Uint64 // delivered to the handler (untagged length)
	RxStopped         atomic.Uint64 // dropped: child not running
	TxFrames, TxBytes atomic.Uint64 // accepted by the parent (untagged length)
	TxFull            atomic.Uint64 // refused with gnet.ErrTxFull
	TxErrors          atomic.Uint64 // refused otherwise (link down, size, not running)
}

// Trunk is a parent NIC split into VLANs.
type Trunk struct {
	parent gnet.NIC
	gather bool
	ports  []*Port
	byVID  [MaxVID + 1]*Port // index 0: the child of untagged frames
	rx     trunkHandler

	mu            sync.Mutex // running, parentStarted, finished; serialises Start/Stop
	running       int
	parentStarted bool
	finished      bool

	Stats TrunkStats
}

// New returns a trunk over parent with a child per cfg.VIDs. Nothing runs
// until a child is started.
func New(parent gnet.NIC, cfg Config) (*Trunk, error) {
	if parent == nil {
		return nil, errors.New("vlan: nil parent")
	}
	if len(cfg.VIDs) == 0 {
		return nil, errors.New("vlan: no VIDs")
	}
	if mtu := parent.MTU(); mtu <= 0 || mtu+gnet.EthHeaderLen+gnet.VLANTagLen > gnet.RxBufSize {
		return nil, fmt.Errorf("vlan: parent MTU %d leaves no room for a tag in %d bytes", mtu, gnet.RxBufSize)
	}
	name := cfg.Name
	if name == "" {
		name = "trunk"
	}
	t := &Trunk{parent: parent, gather: parent.Capabilities()&gnet.CapScatterGather != 0}
	t.rx.t = t
	for _, vid := range cfg.VIDs {
		if vid < 1 || vid > MaxVID {
			return nil, fmt.Errorf("vlan: VID %d out of range 1..%d", vid, MaxVID)
		}
		if t.byVID[vid] != nil {
			return nil, fmt.Errorf("vlan: VID %d listed twice", vid)
		}
		p := &Port{t: t, vid: vid, tci: vid, name: name + "." + strconv.Itoa(int(vid))}
		t.byVID[vid] = p
		t.ports = append(t.ports, p)
	}
	if cfg.Untagged != 0 {
		if cfg.Untagged > MaxVID || t.byVID[cfg.Untagged] == nil {
			return nil, fmt.Errorf("vlan: untagged VID %d is not one of VIDs", cfg.Untagged)
		}
		t.byVID[0] = t.byVID[cfg.Untagged]
	}
	return t, nil
}

// Port returns the child of VLAN vid.
func (t *Trunk) Port(vid uint16) (*Port, error) {
	if vid < 1 || vid > MaxVID || t.byVID[vid] == nil {
		return nil, fmt.Errorf("vlan: no port for VID %d", vid)
	}
	return t.byVID[vid], nil
}

// Ports returns the children in the order of Config.VIDs.
func (t *Trunk) Ports() []*Port { return append([]*Port(nil), t.ports...) }

// start registers p's start and starts the parent with the first child.
func (t *Trunk) start(p *Port, h gnet.Handler) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.finished {
		return ErrStopped
	}
	p.mu.Lock()
	if p.started {
		p.mu.Unlock()
		return fmt.Errorf("vlan: %s already started", p.name)
	}
	p.h, p.started = h, true
	p.running.Store(true)
	p.mu.Unlock()
	if !t.parentStarted {
		if err := t.parent.Start(&t.rx); err != nil {
			p.mu.Lock()
			p.h, p.started = nil, false
			p.running.Store(false)
			p.mu.Unlock()
			return err
		}
		t.parentStarted = true
	}
	t.running++
	return nil
}

// stop unregisters p's handler and stops the parent after the last child.
func (t *Trunk) stop(p *Port) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p.mu.Lock() // waits for a delivery to p in progress
	wasRunning := p.running.Load()
	p.h = nil
	p.running.Store(false)
	p.mu.Unlock()
	if !wasRunning {
		return
	}
	t.running--
	if t.running == 0 {
		t.finished = true
		t.parent.Stop() // releases the tagged frames still queued
	}
}

// trunkHandler is the parent's handler. It is a separate type so that
// Trunk's exported method set stays the trunk's, not a Handler's.
type trunkHandler struct {
	t       *Trunk
	scratch [gnet.RxBufSize]byte // the untagged frame children borrow; parent's receive context only
}

var (
	_ gnet.Handler       = (*trunkHandler)(nil)
	_ gnet.TxWaker       = (*trunkHandler)(nil)
	_ gnet.NIC           = (*Port)(nil)
	_ gnet.TxBuf         = (*txFrame)(nil)
	_ gnet.CounterReader = (*Port)(nil)
	_ gnet.TxBatcher     = (*Port)(nil)
)

// Receive implements gnet.Handler: demultiplex by VID, untag, deliver.
func (r *trunkHandler) Receive(frame []byte) {
	t := r.t
	n := len(frame)
	if n < gnet.EthHeaderLen {
		t.Stats.RxRunt.Add(1)
		return
	}
	if n > gnet.RxBufSize {
		t.Stats.RxOversize.Add(1)
		return
	}
	if binary.BigEndian.Uint16(frame[addrLen:]) != tpid8021Q {
		p := t.byVID[0]
		if p == nil {
			t.Stats.RxUntagged.Add(1)
			return
		}
		p.deliver(frame) // as it is: nothing to strip, nothing to copy
		return
	}
	if n < tagEnd {
		t.Stats.RxRunt.Add(1)
		return
	}
	vid := binary.BigEndian.Uint16(frame[gnet.EthHeaderLen:]) & vidMask
	var p *Port
	switch vid {
	case vidReserved:
		t.Stats.RxBadVID.Add(1)
		return
	case 0: // priority-tagged: the untagged VLAN's
		if p = t.byVID[0]; p == nil {
			t.Stats.RxUntagged.Add(1)
			return
		}
	default:
		if p = t.byVID[vid]; p == nil {
			t.Stats.RxUnknownVID.Add(1)
			return
		}
	}
	s := r.scratch[:n-gnet.VLANTagLen]
	copy(s, frame[:addrLen])
	copy(s[addrLen:], frame[tagHdrLen:])
	p.deliver(s)
}

// LinkChanged implements gnet.Handler: every running child hears it.
func (r *trunkHandler) LinkChanged(ls gnet.LinkState) {
	for _, p := range r.t.ports {
		p.mu.Lock()
		if p.h != nil {
			p.h.LinkChanged(ls)
		}
		p.mu.Unlock()
	}
}

// TxReady implements gnet.TxWaker: the parent freed descriptors, so every
// child that was refused with ErrTxFull since the last TxReady is woken.
func (r *trunkHandler) TxReady() {
	for _, p := range r.t.ports {
		if !p.txOwed.CompareAndSwap(true, false) {
			continue
		}
		p.mu.Lock()
		if w, ok := p.h.(gnet.TxWaker); ok {
			w.TxReady()
		}
		p.mu.Unlock()
	}
}

// Port is one VLAN of a trunk: a gnet.NIC whose frames are the parent's
// frames with that VID, untagged.
type Port struct {
	t    *Trunk
	vid  uint16
	tci  uint16 // PCP 0, DEI 0, VID
	name string

	mu      sync.Mutex // h, started; held while calling h
	h       gnet.Handler
	started bool
	running atomic.Bool
	txOwed  atomic.Bool // refused with ErrTxFull: owe the handler a TxReady

	Stats PortStats
}

// TxBatchBegin implements net.TxBatcher: the batch is the parent's, if
// it batches.
func (p *Port) TxBatchBegin() {
	if b, ok := p.t.parent.(gnet.TxBatcher); ok {
		b.TxBatchBegin()
	}
}

// TxBatchEnd implements net.TxBatcher.
func (p *Port) TxBatchEnd() {
	if b, ok := p.t.parent.(gnet.TxBatcher); ok {
		b.TxBatchEnd()
	}
}

// VID is the child's VLAN ID.
func (p *Port) VID() uint16 { return p.vid }

// Name is the child's name, Config.Name.VID (eth0.2).
func (p *Port) Name() string { return p.name }

// MACAddress implements gnet.NIC: the parent's.
func (p *Port) MACAddress() gnet.MAC { return p.t.parent.MACAddress() }

// MTU implements gnet.NIC: the parent's (the tag travels in the 4 bytes
// every NIC accepts beyond MTU + header).
func (p *Port) MTU() int { return p.t.parent.MTU() }

// Capabilities implements gnet.NIC. A child always gathers (with a parent
// that cannot, it copies the gather list once, where its caller would
// otherwise have flattened and it copied again to insert the tag). Receive
// checksums verified by the parent stay verified; transmit checksum
// offload is not passed on, as nothing says the parent's hardware finds
// the transport header behind a tag.
func (p *Port) Capabilities() gnet.Capabilities {
	return gnet.CapScatterGather | p.t.parent.Capabilities()&gnet.CapRxChecksum
}

// Link implements gnet.NIC: the parent's.
func (p *Port) Link() gnet.LinkState { return p.t.parent.Link() }

// Start implements gnet.NIC. The first child started starts the parent.
// The handler must not call Stop on its own child (the child waits for
// the handler to return).
func (p *Port) Start(h gnet.Handler) error {
	if h == nil {
		return errors.New("vlan: nil handler")
	}
	return p.t.start(p, h)
}

// Stop implements gnet.NIC: no call reaches the handler after it returns.
// The last running child stops the parent, which releases the frames
// still queued.
func (p *Port) Stop() { p.t.stop(p) }

// Counters implements gnet.CounterReader. The trunk's own drops
// (TrunkStats) belong to no child; the parent's NIC counts the rest.
func (p *Port) Counters() gnet.Counters {
	return gnet.Counters{
		RxFrames: p.Stats.RxFrames.Load(), RxBytes: p.Stats.RxBytes.Load(),
		TxFrames: p.Stats.TxFrames.Load(), TxBytes: p.Stats.TxBytes.Load(),
	}
}

// deliver lends f to the handler, or counts it lost if p is not running.
func (p *Port) deliver(f []byte) {
	p.mu.Lock()
	if p.h == nil {
		p.mu.Unlock()
		p.Stats.RxStopped.Add(1)
		return
	}
	p.h.Receive(f)
	p.mu.Unlock()
	p.Stats.RxFrames.Add(1)
	p.Stats.RxBytes.Add(uint64(len(f)))
}

// Transmit implements gnet.NIC: b goes out through the parent with the
// child's tag after its addresses. On error the caller keeps b.
func (p *Port) Transmit(b gnet.TxBuf) error {
	if !p.running.Load() {
		p.Stats.TxErrors.Add(1)
		return ErrNotRunning
	}
	segs := b.Segments()
	n := 0
	for _, s := range segs {
		n += len(s)
	}
	if n < gnet.EthHeaderLen || n+gnet.VLANTagLen > gnet.RxBufSize {
		p.Stats.TxErrors.Add(1)
		return ErrFrameSize
	}
	f := txPool.Get().(*txFrame)
	f.n = n + gnet.VLANTagLen
	h := &f.hdr
	binary.BigEndian.PutUint16(h[addrLen:], tpid8021Q)
	binary.BigEndian.PutUint16(h[gnet.EthHeaderLen:], p.tci)
	gatherCopy(h[:addrLen], segs, 0)
	if p.t.gather {
		f.segs = append(f.segs[:0], h[:])
		skip := addrLen // the address bytes now in the header
		for _, s := range segs {
			if skip >= len(s) {
				skip -= len(s)
				continue
			}
			f.segs = append(f.segs, s[skip:])
			skip = 0
		}
		f.inner = b // released with f
	} else {
		if f.flat == nil {
			f.flat = new([gnet.RxBufSize]byte)
		}
		copy(f.flat[:], h[:])
		gatherCopy(f.flat[tagHdrLen:f.n], segs, addrLen)
		f.segs = append(f.segs[:0], f.flat[:f.n])
	}
	err := p.t.parent.Transmit(f)
	if err == gnet.ErrTxFull {
		// Record that a TxReady is owed, then try once more (the contract's
		// order: a parent that refuses again has set its own flag after
		// ours, so its TxReady finds ours; one that frees descriptors in
		// between lets the retry through).
		p.txOwed.Store(true)
		err = p.t.parent.Transmit(f)
	}
	if err != nil {
		f.inner = nil
		f.recycle()
		if err == gnet.ErrTxFull {
			p.Stats.TxFull.Add(1)
		} else {
			p.Stats.TxErrors.Add(1)
		}
		return err
	}
	// f may already be released and reused: only b and p from here on.
	if !p.t.gather {
		b.Release() // the parent has its copy
	}
	p.Stats.TxFrames.Add(1)
	p.Stats.TxBytes.Add(uint64(n))
	return nil
}

// gatherCopy fills dst with the bytes of the concatenated segs that start
// at offset from.
func gatherCopy(dst []byte, segs [][]byte, from int) {
	for _, s := range segs {
		if len(dst) == 0 {
			return
		}
		if from >= len(s) {
			from -= len(s)
			continue
		}
		dst = dst[copy(dst, s[from:]):]
		from = 0
	}
}

// txFrame is the tagged frame the parent transmits: a pooled header in
// front of the child's segments (gather), or a pooled flat copy.
type txFrame struct {
	hdr   [tagHdrLen]byte
	segs  [][]byte
	n     int
	inner gnet.TxBuf            // the child's frame, released with this one (gather)
	flat  *[gnet.RxBufSize]byte // the copy (no gather), allocated once per pooled frame
}

// txSegs is the gather list capacity a pooled frame starts with: header +
// the few segments the bridge and netstack send (more grow it once).
const txSegs = 8

var txPool = sync.Pool{New: func() any { return &txFrame{segs: make([][]byte, 0, txSegs)} }}

func (f *txFrame) Segments() [][]byte { return f.segs }
func (f *txFrame) Len() int           { return f.n }

// Release implements gnet.TxBuf: the child's frame is released with the
// tagged one, exactly once, since the parent releases this one once.
func (f *txFrame) Release() {
	inner := f.inner
	f.inner = nil
	f.recycle()
	if inner != nil {
		inner.Release()
	}
}

func (f *txFrame) recycle() {
	clear(f.segs) // keep no payload reachable from the pool
	f.segs = f.segs[:0]
	f.n = 0
	txPool.Put(f)
}
