package nictest

import (
	"sync"

	gnet "github.com/gowrt/gowrt/net"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// Spy wraps a NIC and records where in memory the frames it lends its
// handler, the frames it hands over by reference (the bridge's host port
// to a handler with a ReceiveView method) and the frames it is given to
// transmit lie, for tests that count the copies a frame costs on its way:
// the same address at two places is one buffer, a different one a copy.
// Only the addresses of the recorded slices may be looked at once the
// call that carried them has returned; their contents belong to their
// owners again.
type Spy struct {
	gnet.NIC

	mu   sync.Mutex
	lent [][]byte // frames lent to the handler
	kept [][]byte // frames handed over by reference
	sent [][]byte // first segment of every frame transmitted
	up   bool
}

// viewReceiver is what the bridge's host port looks for in its handler
// (bridge.ViewHandler).
type viewReceiver interface{ ReceiveView(*buffer.View) }

// Start implements gnet.NIC: the inner NIC delivers to h through the spy,
// by reference too if h takes frames that way.
func (s *Spy) Start(h gnet.Handler) error {
	if vr, ok := h.(viewReceiver); ok {
		return s.NIC.Start(spyViewHandler{spyHandler{s, h}, vr})
	}
	return s.NIC.Start(spyHandler{s, h})
}

// Transmit implements gnet.NIC.
func (s *Spy) Transmit(b gnet.TxBuf) error {
	s.mu.Lock()
	s.sent = append(s.sent, b.Segments()[0])
	s.mu.Unlock()
	return s.NIC.Transmit(b)
}

// Lent returns the frames the NIC lent its handler so far.
func (s *Spy) Lent() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.lent...)
}

// Kept returns the frames the NIC handed its handler by reference so far.
func (s *Spy) Kept() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.kept...)
}

// Sent returns the first segment of every frame given to Transmit so far.
func (s *Spy) Sent() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.sent...)
}

// LinkUp reports the last carrier state the NIC reported to its handler.
func (s *Spy) LinkUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

type spyHandler struct {
	s *Spy
	h gnet.Handler
}

func (h spyHandler) Receive(f []byte) {
	h.s.mu.Lock()
	h.s.lent = append(h.s.lent, f)
	h.s.mu.Unlock()
	h.h.Receive(f)
}

func (h spyHandler) LinkChanged(ls gnet.LinkState) {
	h.s.mu.Lock()
	h.s.up = ls.Up
	h.s.mu.Unlock()
	h.h.LinkChanged(ls)
}

type spyViewHandler struct {
	spyHandler
	vr viewReceiver
}

func (h spyViewHandler) ReceiveView(v *buffer.View) {
	h.s.mu.Lock()
	h.s.kept = append(h.s.kept, v.AsSlice())
	h.s.mu.Unlock()
	h.vr.ReceiveView(v)
}

// Dispatcher is a gVisor stack.NetworkDispatcher (what a stack is to its
// link endpoint) that records, for every packet delivered to it, the
// memory gVisor holds it in (its first slice, from the link header on)
// and a copy of its bytes.
type Dispatcher struct {
	mu     sync.Mutex
	mem    [][]byte
	frames [][]byte
}

// DeliverNetworkPacket implements stack.NetworkDispatcher.
func (d *Dispatcher) DeliverNetworkPacket(_ tcpip.NetworkProtocolNumber, pkt *stack.PacketBuffer) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mem = append(d.mem, pkt.AsSlices()[0])
	d.frames = append(d.frames, pkt.ToView().ToSlice())
}

// DeliverLinkPacket implements stack.NetworkDispatcher.
func (*Dispatcher) DeliverLinkPacket(tcpip.NetworkProtocolNumber, *stack.PacketBuffer) {}

// Packets returns, for every packet delivered so far, the memory gVisor
// held it in and its bytes.
func (d *Dispatcher) Packets() (mem, frames [][]byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([][]byte(nil), d.mem...), append([][]byte(nil), d.frames...)
}
