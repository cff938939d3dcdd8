package bridge

import (
	"fmt"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/buffer"
)

// sinkLink accepts every frame and only touches its length, so the
// benchmarks measure the bridge, not a NIC. The padding keeps two sinks
// written by different goroutines off one cache line.
type sinkLink struct {
	n int
	_ [56]byte
}

func (l *sinkLink) Send(hdr, payload []byte) bool {
	l.n += len(hdr) + len(payload)
	return true
}

var benchSizes = []int{60, 1514}

func benchBridge(b *testing.B, vlans []PortVLANs, in int, f []byte) {
	// The real clock, as in the firmware; no storm control, which would
	// drop all but a burst of the flooded frames.
	br, err := New(Config{MAC: brMAC, FloodRate: -1})
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range vlans {
		p, err := br.AddPort(&sinkLink{}, v)
		if err != nil {
			b.Fatal(err)
		}
		br.SetLink(p, true)
	}
	// Teach the bridge where stB lives (port 1) so unicast is known.
	br.Input(1, frame(bcast, stB, -1, 0, 46))
	if br.Flooded() != 1 {
		b.Fatal("setup frame not bridged")
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		br.Input(in, f)
	}
	b.StopTimer()
	if br.Forwarded()+br.Flooded() < uint64(b.N) {
		b.Fatalf("only %d of %d frames bridged", br.Forwarded()+br.Flooded(), b.N)
	}
}

// BenchmarkBridgeBaselineCopy is the reference: one plain copy of the frame,
// the least any forwarder that does not share buffers must do.
func BenchmarkBridgeBaselineCopy(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := frame(stB, stA, -1, 0, n-14)
			dst := make([]byte, len(src))
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				copy(dst, src)
			}
		})
	}
}

// BenchmarkBridgeForward: known unicast, untagged in and out.
func BenchmarkBridgeForward(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchBridge(b, []PortVLANs{DefaultVLANs, DefaultVLANs, DefaultVLANs, DefaultVLANs},
				0, frame(stB, stA, -1, 0, n-14))
		})
	}
}

// BenchmarkBridgeRetag: known unicast from an access port to a trunk,
// which adds an 802.1Q tag on egress.
func BenchmarkBridgeRetag(b *testing.B) {
	trunk := PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}
	access := PortVLANs{PVID: 10, Untagged: []uint16{10}}
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			// stB is learned in VLAN 1; learn it in VLAN 10 via a tagged frame.
			br, _ := New(Config{MAC: brMAC})
			sinks := []*sinkLink{{}, {}}
			br.AddPort(sinks[0], access)
			br.AddPort(sinks[1], trunk)
			br.SetLink(0, true)
			br.SetLink(1, true)
			br.Input(1, frame(bcast, stB, 10, 0, 46))
			f := frame(stB, stA, -1, 0, n-14)
			b.ReportAllocs()
			b.SetBytes(int64(n))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				br.Input(0, f)
			}
			b.StopTimer()
			if br.PortStats(1).TxFrames.Load() < uint64(b.N) {
				b.Fatal("frames not retagged to the trunk")
			}
		})
	}
}

// BenchmarkBridgeFlood: broadcast to three other ports.
func BenchmarkBridgeFlood(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchBridge(b, []PortVLANs{DefaultVLANs, DefaultVLANs, DefaultVLANs, DefaultVLANs},
				0, frame(bcast, stA, -1, 0, n-14))
		})
	}
}

// nullNIC completes every transmit at once, like a NIC with an idle ring.
type nullNIC struct{ sent, frames int }

func (*nullNIC) MACAddress() gnet.MAC            { return stC }
func (*nullNIC) MTU() int                        { return 1500 }
func (*nullNIC) Capabilities() gnet.Capabilities { return 0 }
func (*nullNIC) Link() gnet.LinkState            { return gnet.LinkState{Up: true} }
func (*nullNIC) Start(gnet.Handler) error        { return nil }
func (*nullNIC) Stop()                           {}
func (n *nullNIC) Transmit(t gnet.TxBuf) error {
	n.sent += t.Len()
	n.frames++
	t.Release()
	return nil
}

// BenchmarkBridgeNICPort: known unicast out through AttachNIC's port.
// The "view" variant feeds a frame the caller holds in a buffer the
// egress TxBuf can share (InputView: nothing copied, the path frames from
// the host port take); the "copy" variant feeds a borrowed frame (Input),
// which the bridge copies once into a pooled buffer for the TxBuf.
func BenchmarkBridgeNICPort(b *testing.B) {
	for _, n := range benchSizes {
		for _, mode := range []string{"view", "copy"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				br, _ := New(Config{MAC: brMAC})
				in, out := &nullNIC{}, &nullNIC{}
				br.AttachNIC(in, DefaultVLANs)
				br.AttachNIC(out, DefaultVLANs)
				br.Input(1, frame(bcast, stB, -1, 0, 46))
				f := frame(stB, stA, -1, 0, n-14)
				v := copyView(f, nil)
				defer v.Release()
				b.ReportAllocs()
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if mode == "view" {
						br.InputView(0, v)
					} else {
						br.Input(0, f)
					}
				}
				b.StopTimer()
				if br.PortStats(1).TxFrames.Load() < uint64(b.N) {
					b.Fatal("frames not sent through the NIC port")
				}
			})
		}
	}
}

// BenchmarkBridgeBidirectional: two goroutines bridge known unicast in
// opposite directions at once (port 0 -> 1 and 1 -> 0), as a TCP transfer's
// data and ACKs do. Its ns/op is per frame over both goroutines; the
// difference to BenchmarkBridgeForward is what the directions cost each
// other (shared counters, the forwarding table's cache lines).
// BenchmarkBridgeBaselineCopyBidirectional is the same-run reference.
func BenchmarkBridgeBidirectional(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			br, _ := New(Config{MAC: brMAC})
			br.AddPort(&sinkLink{}, DefaultVLANs)
			br.AddPort(&sinkLink{}, DefaultVLANs)
			br.SetLink(0, true)
			br.SetLink(1, true)
			ab, ba := frame(stB, stA, -1, 0, n-14), frame(stA, stB, -1, 0, n-14)
			br.Input(1, ba)
			br.Input(0, ab)
			runBidirectional(b, n, func(i int) { br.Input(0, ab) }, func(i int) { br.Input(1, ba) })
			if got := br.Forwarded(); got < uint64(b.N) {
				b.Fatalf("only %d of %d frames forwarded", got, b.N)
			}
		})
	}
}

// BenchmarkBridgeBaselineCopyBidirectional: two goroutines each copying
// frames, the parallel counterpart of BenchmarkBridgeBaselineCopy.
func BenchmarkBridgeBaselineCopyBidirectional(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s1, s2 := frame(stB, stA, -1, 0, n-14), frame(stA, stB, -1, 0, n-14)
			d1, d2 := make([]byte, len(s1)), make([]byte, len(s2))
			runBidirectional(b, n, func(int) { copy(d1, s1) }, func(int) { copy(d2, s2) })
		})
	}
}

// runBidirectional runs b.N calls split between two goroutines.
func runBidirectional(b *testing.B, size int, a, c func(int)) {
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	done := make(chan struct{})
	go func() {
		for i := 0; i < b.N/2; i++ {
			c(i)
		}
		close(done)
	}()
	for i := b.N / 2; i < b.N; i++ {
		a(i)
	}
	<-done
	b.StopTimer()
}

// viewSink is a host-side ViewHandler that drops what it gets, like a
// stack that processes a frame at once.
type viewSink struct{ n int }

func (h *viewSink) Receive([]byte)             { h.n++ }
func (h *viewSink) ReceiveView(v *buffer.View) { h.n++; v.Release() }
func (h *viewSink) LinkChanged(gnet.LinkState) {}

// BenchmarkBridgeReceive: a driver's Receive of a borrowed frame through
// AttachNIC's handler, the one copy included: known unicast to one NIC
// port ("forward"), a broadcast to three NIC ports and the host's stack
// ("flood"), and unicast to the host's stack ("host"). The NICs complete
// transmissions at once and the host releases what it gets.
func BenchmarkBridgeReceive(b *testing.B) {
	for _, n := range benchSizes {
		for _, mode := range []string{"forward", "flood", "host"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				br, _ := New(Config{MAC: brMAC, FloodRate: -1})
				host, _ := br.AddHostPort(DefaultVLANs)
				sink := &viewSink{}
				host.Start(sink)
				in := &holdNIC{}
				outs := []*nullNIC{{}, {}, {}}
				br.AttachNIC(in, DefaultVLANs)
				for _, o := range outs {
					br.AttachNIC(o, DefaultVLANs)
				}
				br.Input(2, frame(bcast, stB, -1, 0, 46)) // learn B on outs[0]
				dst := map[string]gnet.MAC{"forward": stB, "flood": bcast, "host": brMAC}[mode]
				f := ipFrame(dst, stA)
				f = append(f, make([]byte, max(n-len(f), 0))...)[:n]
				var r ring
				dma := r.buf[:copy(r.buf[:], f)] // the driver's receive buffer
				b.ReportAllocs()
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					in.h.Receive(dma)
				}
				b.StopTimer()
				if got := map[string]int{"forward": outs[0].frames, "flood": min(outs[2].frames, sink.n), "host": sink.n}[mode]; got < b.N {
					b.Fatalf("%d of %d frames delivered", got, b.N)
				}
			})
		}
	}
}

// BenchmarkHostTransmit: the host's stack sends a frame of three segments
// (headers and two payload pieces, as the netstack Endpoint's segmenter
// makes them) to a known station behind a NIC that copies it (CapTxCopy,
// as pcnet). "lent": the NIC gathers, and is lent the sender's list
// (inputFromHost); "flat", the baseline: the NIC takes flat frames only,
// so the host port gathers the frame into its buffer first and bridges
// it through Input, the path every host frame took before.
func BenchmarkHostTransmit(b *testing.B) {
	for _, n := range benchSizes {
		for _, mode := range []string{"lent", "flat"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				br, hn := startedHost(b, DefaultVLANs)
				out := &copyNIC{}
				if mode == "lent" {
					out.caps = gnet.CapScatterGather
				}
				p, _ := br.AttachNIC(out, DefaultVLANs)
				out.h.Receive(frame(bcast, stB, -1, 0, 46))
				f := frame(stB, brMAC, -1, 0, n-14)
				half := 54 + (n-54)/2
				g := &listTx{segs: [][]byte{f[:54], f[54:half], f[half:]}}
				b.ReportAllocs()
				b.SetBytes(int64(n))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_ = hn.Transmit(g)
				}
				b.StopTimer()
				if br.PortStats(p).TxFrames.Load() < uint64(b.N) {
					b.Fatal("frames not sent through the NIC port")
				}
			})
		}
	}
}
