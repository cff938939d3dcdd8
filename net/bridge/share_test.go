package bridge

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/buffer"
)

// holdNIC keeps every TxBuf it accepts, as a NIC whose DMA has not
// completed yet, until the test completes them.
type holdNIC struct {
	caps gnet.Capabilities
	h    gnet.Handler
	held []gnet.TxBuf
}

func (*holdNIC) MACAddress() gnet.MAC              { return stC }
func (*holdNIC) MTU() int                          { return 1500 }
func (n *holdNIC) Capabilities() gnet.Capabilities { return n.caps }
func (*holdNIC) Link() gnet.LinkState              { return gnet.LinkState{Up: true} }
func (n *holdNIC) Start(h gnet.Handler) error      { n.h = h; return nil }
func (*holdNIC) Stop()                             {}
func (n *holdNIC) Transmit(t gnet.TxBuf) error     { n.held = append(n.held, t); return nil }

// flat returns held frame i as one byte slice.
func (n *holdNIC) flat(i int) []byte {
	var f []byte
	for _, s := range n.held[i].Segments() {
		f = append(f, s...)
	}
	return f
}

func (n *holdNIC) complete() {
	for _, t := range n.held {
		t.Release()
	}
	n.held = nil
}

// rxView is what a driver hands the bridge: a fresh view holding f.
func rxView(f []byte) *buffer.View { return gnet.CopyRxView(f) }

// TestNICPortSharesIngressView: a frame bridged unchanged reaches the
// egress NIC as the ingress buffer itself (same memory: no copy), stays
// intact after the ingress side released its view and the pool reused
// memory, and a frame flooded to two NICs is one buffer for both.
func TestNICPortSharesIngressView(t *testing.T) {
	b, _ := New(Config{MAC: brMAC})
	in, out1, out2 := &holdNIC{}, &holdNIC{}, &holdNIC{}
	for _, n := range []*holdNIC{in, out1, out2} {
		if _, err := b.AttachNIC(n, DefaultVLANs); err != nil {
			t.Fatal(err)
		}
	}
	f := frame(bcast, stA, -1, 0, 100)
	v := rxView(f)
	mem := &v.AsSlice()[0]
	in.h.Receive(v) // the bridge releases the driver's reference
	for i := 0; i < 50; i++ {
		w := gnet.NewRxView() // churn the pool: a freed chunk would be reused
		clear(w.AsSlice()[:cap(w.AsSlice())])
		w.Release()
	}
	for _, o := range []*holdNIC{out1, out2} {
		if len(o.held) != 1 {
			t.Fatalf("%d frames held, want 1", len(o.held))
		}
		if s := o.held[0].Segments(); len(s) != 1 || &s[0][0] != mem {
			t.Fatalf("egress frame is a copy (%d segments), want the ingress buffer", len(s))
		}
		if !bytes.Equal(o.flat(0), f) {
			t.Fatal("held frame changed after the ingress view was released")
		}
	}
	out1.complete()
	if !bytes.Equal(out2.flat(0), f) {
		t.Fatal("one port's completion changed the other port's frame")
	}
	out2.complete()
}

// TestNICPortRetagShared: adding a tag toward a trunk shares the payload
// with a private header for a gathering NIC and copies for one that
// cannot gather; both put the right frame on the wire.
func TestNICPortRetagShared(t *testing.T) {
	access := PortVLANs{PVID: 10, Untagged: []uint16{10}}
	trunk := PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}
	for _, c := range []struct {
		name string
		caps gnet.Capabilities
		segs int
	}{{"gather", gnet.CapScatterGather, 2}, {"flat", 0, 1}} {
		t.Run(c.name, func(t *testing.T) {
			b, _ := New(Config{MAC: brMAC})
			in, out := &holdNIC{}, &holdNIC{caps: c.caps}
			b.AttachNIC(in, access)
			b.AttachNIC(out, trunk)
			in.h.Receive(rxView(frame(bcast, stA, -1, 0, 100)))
			in.h.Receive(rxView(frame(bcast, stB, -1, 0, 100))) // reuses the scratch header
			if len(out.held) != 2 {
				t.Fatalf("%d frames held, want 2", len(out.held))
			}
			for i, src := range []gnet.MAC{stA, stB} {
				if n := len(out.held[i].Segments()); n != c.segs {
					t.Fatalf("frame %d in %d segments, want %d", i, n, c.segs)
				}
				if want := frame(bcast, src, 10, 0, 100); !bytes.Equal(out.flat(i), want) {
					t.Fatalf("frame %d:\n got %x\nwant %x", i, out.flat(i), want)
				}
			}
			out.complete()
		})
	}
}

// TestFDBConcurrent: ports learning, looking up, flushing and sweeping at
// once (run with -race). Station i only ever sends on port i%2, so a
// lookup may miss (aged, flushed, swept) but must never name the other
// port: the lock-free table never pairs a key with another entry's value.
func TestFDBConcurrent(t *testing.T) {
	var clk atomic.Int64
	clk.Store(int64(time.Hour))
	b, _ := New(Config{MAC: brMAC, AgeTime: 2 * time.Second, FDBSize: 256,
		Now: func() int64 { return clk.Add(int64(time.Millisecond)) }})
	for range 3 {
		p, _ := b.AddPort(&atomicSink{}, DefaultVLANs) // sent to from both goroutines
		b.SetLink(p, true)
	}
	const stations = 600 // more than the table holds: inserts fail too
	mac := func(i int) gnet.MAC { return gnet.MAC{0x02, 0, 0, 0, byte(i >> 8), byte(i)} }
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for port := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20000; k++ {
				i := (k*7 + port) % stations
				if i%2 == port {
					b.Input(port, frame(bcast, mac(i), -1, 0, 46))
				}
				j := (k * 13) % stations
				if p, ok := b.Lookup(1, mac(j)); ok && p != j%2 {
					wrong.Add(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // link flaps on the third port flush it
		defer wg.Done()
		for k := 0; k < 200; k++ {
			b.SetLink(2, k%2 == 0)
		}
	}()
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Fatalf("%d lookups named a port the station never used", n)
	}
	if b.FDBEntries() == 0 {
		t.Fatal("nothing learned")
	}
}

// atomicSink counts frames from any number of ingress goroutines.
type atomicSink struct{ n atomic.Int64 }

func (l *atomicSink) Send(hdr, payload []byte) bool { l.n.Add(1); return true }
