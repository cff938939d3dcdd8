// Package net connects gowrt Ethernet drivers to the rest of the firmware.
//
// The package is named net to match its import path
// (github.com/gowrt/gowrt/net); code that also needs the standard library's
// net package imports this one as gnet.
//
// It defines NIC, the small contract every gowrt Ethernet driver implements
// (arge, the bridge's host port, test doubles). Package net/netstack adapts
// any NIC to gVisor's stack, so the firmware's own services (SSH, DHCP, DNS,
// HTTP) run on gVisor's netstack.
//
// Buffer ownership is the centre of the contract:
//
//   - Receive: a driver fills a *buffer.View (gVisor's pooled, refcounted
//     buffer) and hands it to Handler.Receive. Ownership moves with the call;
//     the netstack Endpoint wraps the view in a PacketBuffer with buffer.MakeWithView,
//     so the bytes the DMA engine wrote are the bytes gVisor parses: no copy.
//     A driver replenishes its RX ring with fresh views (NewRxView).
//   - Transmit: the caller passes a TxBuf, a gather list plus a Release hook.
//     A NIC that accepts the frame (nil error) owns it until it calls Release
//     exactly once, after the hardware has finished reading the memory (TX
//     completion) or the frame was discarded. A NIC that advertises
//     CapScatterGather gets the stack's segments as they are; others always
//     get one contiguous segment.
//   - A full TX ring is reported with ErrTxFull and never waited on: the
//     caller keeps ownership. After returning ErrTxFull a NIC calls
//     TxWaker.TxReady once it has reclaimed descriptors (Linux's
//     netif_stop_queue/netif_wake_queue), so the Endpoint can hold frames
//     in a bounded software queue instead of dropping TCP bursts; only
//     when that queue is full too are frames dropped and counted.
package net

import (
	"errors"
	"fmt"

	"gvisor.dev/gvisor/pkg/buffer"
)

// Ethernet framing sizes (IEEE 802.3 clause 3). Frames exchanged with a NIC
// never include the 4-byte FCS: the MAC strips it on receive and appends it
// on transmit.
const (
	EthHeaderLen = 14   // destination, source, EtherType
	VLANTagLen   = 4    // IEEE 802.1Q tag: TPID 0x8100 + TCI
	DefaultMTU   = 1500 // Ethernet II payload limit
	// MinTypeValue is the smallest EtherType (IEEE 802.3 clause 3.2.6);
	// smaller values in the type/length field are 802.3 lengths (LLC frames
	// such as STP BPDUs), which gVisor does not handle.
	MinTypeValue = 0x0600
)

// MAC is a 48-bit IEEE 802 MAC address.
type MAC [6]byte

// String formats m as colon-separated lowercase hex.
func (m MAC) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

// IsMulticast reports whether the group bit (I/G, the LSB of the first
// octet) is set; broadcast is a multicast address.
func (m MAC) IsMulticast() bool { return m[0]&1 != 0 }

// IsZero reports whether m is 00:00:00:00:00:00.
func (m MAC) IsZero() bool { return m == MAC{} }

// LinkState is the carrier state a NIC reports from its PHY.
type LinkState struct {
	Up         bool
	SpeedMbps  int  // 10, 100, 1000; 0 when unknown or down
	FullDuplex bool // meaningful only when Up
}

// Capabilities are optional NIC features the Endpoint can use.
type Capabilities uint32

const (
	// CapScatterGather: Transmit accepts a TxBuf with several segments
	// (chained TX descriptors); without it the Endpoint flattens first.
	CapScatterGather Capabilities = 1 << iota
	// CapRxChecksum: the hardware verified IPv4/TCP/UDP checksums of
	// delivered frames, so the stack may skip them.
	CapRxChecksum
	// CapTxChecksum: the hardware fills in transport checksums.
	CapTxChecksum
)

// ErrTxFull is returned by NIC.Transmit when the TX ring has no free
// descriptor. The caller keeps ownership of the TxBuf.
var ErrTxFull = errors.New("net: TX ring full")

// ErrLinkDown is returned by NIC.Transmit when the carrier is down.
var ErrLinkDown = errors.New("net: link down")

// TxBuf is one outgoing Ethernet frame (header included, FCS excluded).
type TxBuf interface {
	// Segments returns the frame as an ordered gather list. The slices stay
	// valid and unmodified until Release.
	Segments() [][]byte
	// Len is the total frame length in bytes.
	Len() int
	// Release returns the memory to its owner. Called exactly once by
	// whoever owns the TxBuf when it is no longer needed.
	Release()
}

// Handler receives what a NIC reports. A NIC calls it from its own RX
// context (interrupt handler goroutine); calls for one NIC are serialised.
type Handler interface {
	// Receive delivers one received frame (FCS stripped). The handler takes
	// ownership of v and releases it.
	Receive(v *buffer.View)
	// LinkChanged reports a carrier change.
	LinkChanged(LinkState)
}

// TxWaker is implemented by handlers that queue frames while the TX ring
// is full (the Endpoint does). After a Transmit returned ErrTxFull, a NIC
// whose handler implements TxWaker calls TxReady once it has freed
// descriptors. A driver must not lose this wakeup: it records that
// TxReady is owed before its final ring-full check, not after. The NIC
// must not hold locks its Transmit takes while calling TxReady.
//
// It is separate from Handler so handlers that wrap another (VLAN
// untaggers, taps) keep compiling; a wrapper that does not forward
// TxReady only delays queued frames until the next transmit.
type TxWaker interface {
	TxReady()
}

// NIC is the contract every gowrt Ethernet driver implements.
type NIC interface {
	// MACAddress is the station address programmed into the MAC.
	MACAddress() MAC
	// MTU is the largest payload after the Ethernet header the NIC can send
	// and receive (1500 unless the hardware supports larger frames).
	MTU() int
	// Capabilities returns the optional features the driver supports.
	Capabilities() Capabilities
	// Link returns the current carrier state.
	Link() LinkState
	// Start begins delivering received frames and link changes to h.
	// Start is called once; the NIC must not call h after Stop returns.
	Start(h Handler) error
	// Transmit queues one frame without blocking. On nil the NIC owns b
	// and calls b.Release once the hardware is done with it; on error
	// (ErrTxFull, ErrLinkDown, a size error) the caller keeps b.
	Transmit(b TxBuf) error
	// Stop halts RX delivery and frees the rings; queued TX frames are
	// released.
	Stop()
}

// RxBufSize is the size of the RX views NewRxView hands out: a maximal
// tagged frame (1500 + 14 + 4) rounded up to gVisor's 2 KiB buffer pool
// class, so a receive buffer never needs more than one view.
const RxBufSize = 2048

// NewRxView returns an empty receive buffer of RxBufSize bytes whose whole
// capacity is exposed by AsSlice for the DMA engine (or a model) to fill;
// the driver then trims it with CapLength(n) to the received length and
// passes it to Handler.Receive. Views come from gVisor's chunk pools, so
// steady-state RX does not allocate.
func NewRxView() *buffer.View { return buffer.NewViewSize(RxBufSize) }

// CopyRxView returns a receive view holding first followed by rest, for
// NICs (and models, and the bridge's host port) whose frames arrive in
// memory they cannot hand over: one copy into a fresh, unshared view.
// Bytes beyond RxBufSize are dropped; callers check frame sizes first.
func CopyRxView(first []byte, rest ...[]byte) *buffer.View {
	v := NewRxView()
	buf := v.AsSlice()
	buf = buf[:cap(buf)]
	n := copy(buf, first)
	for _, p := range rest {
		n += copy(buf[n:], p)
	}
	v.CapLength(n)
	return v
}

// DropReason says why a NIC lost a frame (see Counters).
type DropReason uint8

// The reasons a NIC counts lost frames under.
const (
	// DropRxOversize: received frame longer than the largest frame the
	// port accepts (the MAC's maximum frame length or its RX buffers).
	DropRxOversize DropReason = iota
	// DropRxUndersize: received frame shorter than an Ethernet header.
	DropRxUndersize
	// DropRxErrors: received frame damaged on the wire (bad FCS,
	// alignment or symbol errors), or a receive error the hardware did
	// not break down.
	DropRxErrors
	// DropRxNoRoom: the MAC had no room for a received frame (its FIFO or
	// its receive ring was full).
	DropRxNoRoom
	// DropRxBadDescriptor: the hardware reported a received frame with an
	// impossible length or flags; the driver discarded it.
	DropRxBadDescriptor
	// DropTxErrors: a frame the driver accepted was lost in the hardware
	// (underrun, bus error, collisions).
	DropTxErrors
	// NumDropReasons is the number of reasons (the length of Counters.Drops).
	NumDropReasons
)

var dropReasonNames = [NumDropReasons]string{
	"rx-oversize", "rx-undersize", "rx-errors", "rx-no-room", "rx-bad-descriptor", "tx-errors",
}

// String returns the reason's name as the status page shows it.
func (r DropReason) String() string {
	if r < NumDropReasons {
		return dropReasonNames[r]
	}
	return fmt.Sprintf("DropReason(%d)", uint8(r))
}

// Counters are a NIC's own traffic counters: what its driver (and the
// MAC's statistics registers) counted below any bridge or stack.
type Counters struct {
	RxFrames, RxBytes uint64 // frames handed to the Handler (FCS excluded)
	TxFrames, TxBytes uint64 // frames accepted by Transmit
	// Drops counts the frames the port lost, by reason.
	Drops [NumDropReasons]uint64
}

// CounterReader is implemented by NICs that keep Counters. It is optional,
// like TxWaker; the router shows the counters of every port whose NIC has
// it. Counters may read hardware registers: it is for status pages, not
// for per-frame paths.
type CounterReader interface {
	Counters() Counters
}
