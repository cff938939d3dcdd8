// Package net is the contract between gowrt's Ethernet drivers and
// whatever uses them: NIC, which every MAC driver implements (arge, pcnet,
// the TAP device, the bridge's host port, test doubles), its TxBuf and
// Handler, link state, capabilities, counters, and the Ethernet frame
// sizes. It imports nothing but the standard library, so a driver's
// dependencies end here: the gVisor adapter is package net/netstack, the
// software bridge net/bridge, and a driver links neither.
//
// The package is named net to match its import path
// (github.com/gowrt/gowrt/net); code that also needs the standard library's
// net package imports this one as gnet.
//
// # Receive: borrowed frames, one copy by whoever keeps the frame
//
// A driver hands each received frame to Handler.Receive as a slice of its
// own receive buffer, FCS stripped. The frame is borrowed: it is valid only
// until Receive returns, after which the driver gives the buffer back to
// the hardware. The handler reads it and must neither write to it nor keep
// it; a handler that needs the bytes later copies them, once. Drivers
// therefore allocate and copy nothing per received frame, and one copy is
// made between the buffer the hardware wrote and whatever keeps the frame:
//
//   - the gVisor adapter (netstack.Endpoint) copies the frame into a pooled
//     gVisor buffer, which the stack then owns;
//   - the bridge (net/bridge) copies a frame it forwards into one pooled,
//     refcounted buffer that every egress port transmits from and that the
//     bridge's host port hands to the router's stack by reference; a frame
//     the bridge drops is not copied at all. gVisor parses that buffer in
//     place, unless another port is still transmitting it: then gVisor
//     copies what it parses (its buffers are copy-on-write), so only a
//     frame both flooded and for the stack may cost a second copy.
//
// On bare metal the copy cannot be avoided by handing the hardware's
// buffer over instead: receive buffers are DMA memory, which the gowrt
// kernel sets aside for good, while the Go heap may not be a DMA target
// (its pages are scattered, and the runtime gives idle ones back to the
// kernel at any time). Lending the buffer for the duration of the call
// keeps the receive ring full whatever the stack holds on to.
//
// # Keeping a received buffer: zero-copy forwarding
//
// A driver whose receive buffers another driver can transmit from may
// offer each frame's buffer for keeping: if its handler is a BufHandler,
// it calls ReceiveBuf instead of Receive, with an RxBuf. A handler that
// forwards the frame unchanged calls RxBuf.Keep, which refills the
// driver's receive slot from a pool of spare buffers and hands the
// handler the frame's buffer as a TxBuf; it passes that to Transmit, and
// whoever ends up owning it calls Release, which returns the buffer to
// the receiving driver's pool. A NIC that advertises CapTxRxBuf transmits
// such a TxBuf straight from the buffer, by DMA, when both drivers share
// a DMA platform: the frame is not copied at all. The buffer is memory
// the kernel set aside for DMA, not the Go heap, so the reason above for
// copying does not apply; the ring stays full because a spare takes the
// kept buffer's place, and Keep refuses (returns nil) when the pool is
// empty, so a slow egress port costs copies, never receive slots.
//
// A lent buffer is never written but through KeepWith or the bytes
// Rewrite returned: the receiving driver relies on the CPU having only
// read it (or written what it writes back for DMA) when it takes the
// buffer back.
//
// Nor is it read past its head unasked. Only the frame's first RxHeadLen
// bytes (all of a shorter frame) are readable when ReceiveBuf is called;
// the rest becomes readable when the handler calls RxBuf.Frame (or
// Rewrite or KeepWith over more than the head). On a CPU whose caches do
// not snoop DMA the driver must invalidate every cache line of the frame
// the CPU reads, and a router forwarding the frame reads only its
// headers: the body goes from one device to the other by DMA, and its
// lines are invalidated only if someone asks (natbench: about 190
// instructions per 1514-byte frame on QEMU malta's 16-byte lines). A
// handler that reads a byte past the head without asking reads whatever
// the cache held, a stale earlier frame (hwsim shows it).
//
// Calls into a Handler for one NIC, Receive and LinkChanged alike, are
// serialised and made from the NIC's own receive context (its interrupt
// handler goroutine, or a reader goroutine); they may call Transmit on any
// NIC, this one included (forwarding). A handler that blocks holds up the
// NIC's receive ring.
//
// # Transmit: the NIC owns the TxBuf until it releases it
//
// The caller passes a TxBuf, a gather list plus a Release hook. A NIC that
// accepts the frame (nil error) owns it until it calls Release exactly
// once, after the hardware has finished reading the memory (TX completion)
// or the frame was discarded; a NIC that returns an error never calls
// Release, the caller keeps the frame. A NIC that advertises
// CapScatterGather gets the segments as they are; others always get one
// contiguous segment. Either way the NIC may transmit straight from the
// segments (DMA, arge) or copy them into its own buffer and release at
// once (pcnet, the TAP device). A NIC that does the latter says so with
// CapTxCopy: its callers may then transmit memory they merely borrow
// (the bridge forwards a frame from the ingress driver's receive buffer
// to such a NIC without copying it first).
//
// A full TX ring is reported with ErrTxFull and never waited on. After
// returning ErrTxFull a NIC calls TxWaker.TxReady, if its handler
// implements it, once it has reclaimed descriptors (Linux's
// netif_stop_queue/netif_wake_queue), so the netstack Endpoint can hold
// frames in a bounded software queue instead of dropping TCP bursts; only
// when that queue is full too are frames dropped and counted. A driver
// records that TxReady is owed before its last look at the ring, so a
// completion in between cannot lose the wakeup.
//
// A NIC announces new frames to the hardware with a doorbell (a register
// write; on QEMU every one is also an exit to the device model). A NIC
// that implements TxBatcher lets a caller sending a burst ring it once:
// the frames Transmit accepts between TxBatchBegin and TxBatchEnd may
// wait for the doorbell until TxBatchEnd (Linux's xmit_more).
//
// # The shape of a driver
//
// Every MAC driver (arge, pcnet) has the same shape, so a board wires any
// of them the same way:
//
//   - Config. The package's constructor (New, NewNIC) takes a Config that
//     names what the board hands over the same way in every driver: Regs,
//     the device's registers (a barrier.Space); DMA, the busdma.Platform
//     its rings and buffers come from; TxRing and RxRing, the ring sizes
//     in descriptors (0 selects the driver's defaults). The constructor
//     allocates the rings; nothing runs until Start.
//   - Start and Stop. Start(h) starts the hardware and delivery to h; Stop
//     stops both, waits for a service pass in progress, and releases frames
//     still queued for transmission.
//   - Interrupt. The driver does not register its own interrupt: it has a
//     handler method, Interrupt (an intr.Handler), and the board connects
//     it to the device's line on the board's interrupt controller (setting
//     the line's trigger if the bus needs it: level for PCI INTx). The
//     handler does nothing before Start or after Stop, so the board may
//     connect it before Start and disconnect it after Stop.
//   - Counters. The hot path counts with atomics, never a lock per frame,
//     in an exported Stats field (pcnet.NIC.Stats, arge.Driver.Stats): a
//     struct of Counter (64-bit counts made of 32-bit atomics: a 64-bit
//     atomic takes the Go runtime's one global spinlock on 32-bit MIPS)
//     named direction first (TxFrames, TxBytes, RxFrames, RxBytes, then
//     the driver's own: RxBad, TxRingFull, ...), readable at any time
//     without a lock. CounterReader maps them, with the hardware's own
//     drop counters, onto Counters for status pages.
//   - Link. Link state is a LinkState. A MAC driver does not poll its PHY:
//     the board does (phy.Follow in mdio/phy) and tells the NIC the
//     negotiated link with SetLink(LinkState), which reprograms the MAC for
//     the speed and duplex and reports the change to the handler (arge);
//     a chip that knows its own link (pcnet) reports it itself.
package net

import (
	"errors"
	"fmt"
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

// Capabilities are optional NIC features its users (the netstack Endpoint,
// the bridge) can use.
type Capabilities uint32

const (
	// CapScatterGather: Transmit accepts a TxBuf with several segments
	// (chained TX descriptors); without it callers flatten first.
	CapScatterGather Capabilities = 1 << iota
	// CapRxChecksum: the hardware verified IPv4/TCP/UDP checksums of
	// delivered frames, so the stack may skip them.
	CapRxChecksum
	// CapTxChecksum: the hardware fills in transport checksums.
	CapTxChecksum
	// CapTxCopy: Transmit is done with the TxBuf when it returns (but
	// see CapTxRxBuf for the one exception). A NIC
	// that accepts a frame (nil error) has copied it (into its own DMA
	// buffer, a TAP's write) and released it before Transmit returns, and
	// one that refuses it never touched it. A caller may therefore
	// transmit memory it only borrows, such as the frame a Handler.Receive
	// is lending it (the bridge forwards that way: no copy of its own).
	// A wrapper advertises it only if it passes the TxBuf on to such a NIC
	// within the call.
	CapTxCopy
	// CapTxRxBuf: Transmit sends a TxBuf returned by RxBuf.Keep of a
	// driver on the same DMA platform straight from that buffer, without
	// copying it, and releases it at TX completion (even a CapTxCopy NIC:
	// a kept buffer is owned, not borrowed). A TxBuf it cannot send that
	// way it treats as any other.
	CapTxRxBuf
	// CapTxChecksumCopy: Transmit completes the checksum a TxChecksum
	// leaves partial, summing the bytes as it copies them anyway
	// (Linux's CHECKSUM_PARTIAL, done by the driver's copy rather than
	// the hardware). A wrapper advertises it only if every frame it
	// passes on gets its checksum: from a NIC below that completes it,
	// or from the wrapper itself.
	CapTxChecksumCopy
)

// A TxChecksum is a TxBuf whose frame may have one Internet checksum (RFC
// 1071) left to complete, by a NIC with CapTxChecksumCopy or whoever
// stands in for it: the 16-bit big-endian field at byte field of the
// frame, which holds the sum of what the checksum covers outside the
// frame (a pseudo-header), is to become the checksum of the frame's bytes
// from start to its end, the field included (inetsum.Checksum of their
// sum). The field lies in Segments()[0], which the completer may write.
type TxChecksum interface {
	TxBuf
	// ChecksumPartial returns start and field, or ok false for a frame
	// whose checksums are complete.
	ChecksumPartial() (start, field int, ok bool)
}

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

// Handler receives what a NIC reports. Calls for one NIC are serialised
// (see the package documentation).
type Handler interface {
	// Receive delivers one received frame: Ethernet header first, FCS
	// stripped, at most RxBufSize bytes. The frame is borrowed from the
	// driver's receive buffer and valid only until Receive returns; the
	// handler must not write to it or keep it (or any part of it), and
	// copies what it needs to keep.
	Receive(frame []byte)
	// LinkChanged reports a carrier change.
	LinkChanged(LinkState)
}

// BufHandler is a Handler that can keep received frames (see the package
// documentation). A driver that offers its buffers calls ReceiveBuf in
// place of Receive when its handler implements it.
type BufHandler interface {
	Handler
	// ReceiveBuf delivers a frame as Receive does; r lets the handler
	// keep the buffer instead of copying the frame. Kept or not, the
	// frame stays readable until ReceiveBuf returns and is never written.
	// Only frame[:RxHeadLen] is readable at once; r.Frame makes the rest
	// readable (see the package documentation).
	ReceiveBuf(frame []byte, r RxBuf)
	// ReceiveDone ends a driver's receive pass: the driver calls it after
	// the ReceiveBuf calls of each pass over its ring, before it waits
	// for more, so that no ReceiveBuf is left without a ReceiveDone after
	// it. A handler may defer per-frame work to it, such as adding to
	// shared counters (an atomic add per counter and frame costs about 18
	// instructions on mips32, five of them per bridged frame; natbench).
	ReceiveDone()
}

// PassHandler is a Handler that is told which frames arrive together: a
// lower NIC whose frames come in receive passes (a driver's pass over its
// ring, br-lan's host port relaying one) calls ReceivePassOpen before the
// first frame it delivers within a pass and ReceivePassDone after the
// last, always both, so a handler may hold frames between the two: the
// netstack Endpoint coalesces a pass's consecutive TCP segments of one
// connection into one packet for the stack. Passes of several ingress
// drivers may overlap, so a handler counts them; frames delivered while
// none is open are not in a pass and must not be held.
type PassHandler interface {
	Handler
	ReceivePassOpen()
	ReceivePassDone()
}

// RxHeadLen is how many of a lent frame's first bytes a BufHandler may
// read without asking (RxBuf.Frame): Ethernet, a VLAN tag, an IPv4 header
// with options and the start of a transport header, what a bridge or a
// router reads of a frame it forwards. A multiple of every cache line
// size gowrt runs on, so the head never shares a line with the rest.
const RxHeadLen = 128

// RxBuf is the buffer of the frame a ReceiveBuf call delivers.
type RxBuf interface {
	// Frame makes the whole frame readable, not only its head, and
	// returns it: the frame ReceiveBuf lent, until the call returns or,
	// kept, until the TxBuf's Release. The first call does the work (a
	// driver on non-coherent caches invalidates the lines past the head);
	// later ones return the frame.
	Frame() []byte
	// Keep takes the buffer over, during the ReceiveBuf call that lent
	// it and at most once: it returns the frame as a TxBuf of one
	// segment whose Release gives the buffer back to the driver, or nil
	// if the driver has no spare buffer to refill its ring with (the
	// frame is then only borrowed, as with Receive). The TxBuf's
	// Segments are the whole frame, readable (they call Frame); a NIC
	// that sends the buffer by DMA need not ask for them.
	Keep() TxBuf
	// KeepWith is Keep with the frame's first len(head) bytes replaced
	// by head (a router's rewritten headers): the driver writes them
	// into its buffer and makes them visible to DMA. It refuses (nil),
	// keeping nothing, when Keep would or when head is longer than the
	// frame.
	KeepWith(head []byte) TxBuf
	// Rewrite lets the handler write the frame's first n bytes in place
	// (a router rewriting headers without copying them out and back):
	// it returns them, the frame's own memory, readable too, or nil,
	// allowing no write, if n is beyond the frame or the call that lent
	// the buffer has returned. The writes must be done before Keep, or
	// before the call returns if the buffer is not kept; the driver
	// makes them safe for DMA either way (written back with a kept
	// buffer, so the TxBuf carries them, or before it receives into the
	// buffer again). The rest of the frame stays read-only.
	Rewrite(n int) []byte
}

// TxWaker is implemented by handlers that queue frames while the TX ring
// is full (netstack.Endpoint does). After a Transmit returned ErrTxFull, a NIC
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

// TxBatcher is a NIC that can announce a burst of frames to the hardware
// at once. Between TxBatchBegin and TxBatchEnd, always both and from one
// goroutine, Transmit may queue the frames it accepts without ringing the
// doorbell (the driver may still ring early, to keep its ring from
// filling with frames the hardware was not told about); TxBatchEnd rings
// it for every frame still waiting. Batches of several callers may
// overlap, so a NIC counts them. The netstack Endpoint wraps the frames
// it cuts from one offloaded TCP packet in a batch; a wrapper NIC (br-lan's
// host port, a routing interface) relays its batches to the NICs below.
type TxBatcher interface {
	TxBatchBegin()
	TxBatchEnd()
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

// RxBufSize bounds the frames a NIC delivers and accepts (FCS excluded): a
// maximal tagged frame (1500 + 14 + 4) rounded up to 2 KiB, the size class
// of gVisor's buffer pool a maximal frame is copied into. A NIC's MTU must
// leave room for the Ethernet header and one VLAN tag within it.
const RxBufSize = 2048

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
