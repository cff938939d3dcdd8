package netstack_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/netstack"
	"github.com/gowrt/gowrt/net/nictest"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/adapters/gonet"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

var (
	macA  = gnet.MAC{0x02, 0, 0, 0, 0, 0xa}
	macB  = gnet.MAC{0x02, 0, 0, 0, 0, 0xb}
	addrA = tcpip.AddrFrom4([4]byte{192, 168, 1, 1})
	addrB = tcpip.AddrFrom4([4]byte{192, 168, 1, 2})
)

// transferSize keeps the TCP test quick under qemu-mips (~30x slower than
// the host) while still spanning many full-size segments and windows.
func transferSize() int {
	switch runtime.GOARCH {
	case "mips", "mipsle", "mips64", "mips64le":
		return 256 << 10
	}
	return 4 << 20
}

type host struct {
	s   *stack.Stack
	ep  *netstack.Endpoint
	nic *nictest.NIC
}

func newHost(t *testing.T, nic *nictest.NIC, addr tcpip.Address, o netstack.Options) *host {
	s, ep := nictest.NewStack(t, nic, addr, o)
	return &host{s: s, ep: ep, nic: nic}
}

func newPair(t *testing.T, capsA, capsB gnet.Capabilities, ring int, o ...netstack.Options) (*host, *host) {
	na, nb := nictest.Pair(
		nictest.Config{MAC: macA, Caps: capsA, TxRing: ring},
		nictest.Config{MAC: macB, Caps: capsB, TxRing: ring})
	var opt netstack.Options
	if len(o) > 0 {
		opt = o[0]
	}
	return newHost(t, na, addrA, opt), newHost(t, nb, addrB, opt)
}

func ping(t *testing.T, h *host, dst tcpip.Address, payload []byte, timeout time.Duration) error {
	t.Helper()
	return nictest.Ping(h.s, dst, payload, timeout)
}

func TestPingThroughAdapter(t *testing.T) {
	a, b := newPair(t, 0, gnet.CapScatterGather, 64)
	if err := ping(t, a, addrB, []byte("gowrt echo"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := ping(t, b, addrA, bytes.Repeat([]byte{0x5a}, 1000), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if a.ep.Stats.RxFrames.Load() == 0 || b.ep.Stats.TxFrames.Load() == 0 {
		t.Fatalf("counters did not move: a rx %d, b tx %d", a.ep.Stats.RxFrames.Load(), b.ep.Stats.TxFrames.Load())
	}
}

// TestTCPTransfer moves a pseudo-random payload over TCP in both NIC
// flavours (flattening and scatter-gather), with the Endpoint cutting the
// stack's segments and without, and compares SHA-256 digests. The
// receiving stack checks every checksum; the test NIC refuses frames over
// the MTU.
func TestTCPTransfer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		caps   gnet.Capabilities
		noGSO  bool
		passes bool
	}{{"flat", 0, false, false}, {"gather", gnet.CapScatterGather, false, false},
		{"gather, no offload", gnet.CapScatterGather, true, false},
		{"gather, passes", gnet.CapScatterGather, false, true},
		{"flat, passes, no offload", 0, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			na, nb := nictest.Pair(
				nictest.Config{MAC: macA, Caps: tc.caps, TxRing: 64, Passes: tc.passes},
				nictest.Config{MAC: macB, Caps: tc.caps, TxRing: 64, Passes: tc.passes})
			o := netstack.Options{NoSegmentationOffload: tc.noGSO}
			a, b := newHost(t, na, addrA, o), newHost(t, nb, addrB, o)
			ln, err := gonet.ListenTCP(b.s, tcpip.FullAddress{NIC: 1, Addr: addrB, Port: 8080}, ipv4.ProtocolNumber)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			type result struct {
				sum [32]byte
				n   int64
				err error
			}
			got := make(chan result, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					got <- result{err: err}
					return
				}
				defer c.Close()
				h := sha256.New()
				n, err := io.Copy(h, c)
				var r result
				copy(r.sum[:], h.Sum(nil))
				r.n, r.err = n, err
				got <- r
			}()

			data := make([]byte, transferSize())
			rand.New(rand.NewSource(6)).Read(data)
			want := sha256.Sum256(data)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := gonet.DialContextTCP(ctx, a.s, tcpip.FullAddress{NIC: 1, Addr: addrB, Port: 8080}, ipv4.ProtocolNumber)
			if err != nil {
				t.Fatal(err)
			}
			c.SetDeadline(time.Now().Add(90 * time.Second))
			if _, err := c.Write(data); err != nil {
				t.Fatal(err)
			}
			c.Close()
			select {
			case r := <-got:
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.n != int64(len(data)) || r.sum != want {
					t.Fatalf("received %d bytes, digest %x; sent %d, digest %x", r.n, r.sum, len(data), want)
				}
				if off := a.ep.Stats.TxOffloaded.Load(); (off == 0) != tc.noGSO {
					t.Fatalf("%d packets offloaded for segmentation (offload off: %v)", off, tc.noGSO)
				}
				if e := b.s.Stats().TCP.ChecksumErrors.Value(); e != 0 {
					t.Fatalf("receiver counted %d checksum errors", e)
				}
				if co := b.ep.Stats.RxCoalesced.Load(); (co != 0) != tc.passes {
					t.Fatalf("%d segments received coalesced (passes: %v)", co, tc.passes)
				}
			case <-time.After(90 * time.Second):
				t.Fatal("transfer timed out")
			}
		})
	}
}

// TestMalformedFramesDropped injects frames the adapter must refuse and
// checks each is counted in the right bucket and never reaches the stack.
func TestMalformedFramesDropped(t *testing.T) {
	a, _ := newPair(t, 0, 0, 64)
	before := a.s.Stats().NICs.Rx.Packets.Value()
	eth := func(typ uint16, payload int) []byte {
		f := make([]byte, 14+payload)
		copy(f[0:6], macA[:])
		copy(f[6:12], macB[:])
		f[12], f[13] = byte(typ>>8), byte(typ)
		return f
	}
	inject := []struct {
		name  string
		frame []byte
	}{
		{"zero-length", nil},
		{"truncated header", eth(0x0800, 0)[:13]},
		{"oversize", eth(0x0800, 1501)},
		{"oversize tagged", eth(0x8100, 1505)},
		{"802.3 length frame", eth(0x0026, 46)},
	}
	for _, in := range inject {
		a.nic.Inject(in.frame)
	}
	st := &a.ep.Stats
	if got := st.RxMalformed.Load(); got != 2 {
		t.Errorf("RxMalformed = %d, want 2", got)
	}
	if got := st.RxOversize.Load(); got != 2 {
		t.Errorf("RxOversize = %d, want 2", got)
	}
	if got := st.RxUnsupported.Load(); got != 1 {
		t.Errorf("RxUnsupported = %d, want 1", got)
	}
	if got := st.RxFrames.Load(); got != 0 {
		t.Errorf("RxFrames = %d, want 0", got)
	}
	if got := a.s.Stats().NICs.Rx.Packets.Value() - before; got != 0 {
		t.Errorf("stack saw %d packets, want 0", got)
	}
	// A garbage IPv4 packet in a well-formed frame reaches the stack,
	// which must count it as malformed and stay up.
	bad := eth(0x0800, 20)
	bad[14] = 0x45
	a.nic.Inject(bad)
	if st.RxFrames.Load() != 1 {
		t.Errorf("well-framed packet not delivered")
	}
	if a.s.Stats().IP.MalformedPacketsReceived.Value() == 0 {
		t.Errorf("stack did not count the bad IPv4 header")
	}
	if err := ping(t, a, addrB, []byte("still alive"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestTxRingFull freezes the TX engine: WritePackets must return promptly,
// park what fits in the software queue, drop and count the rest with
// ErrNoBufferSpace, and deliver the queued frames once the NIC reports
// TxReady.
func TestTxRingFull(t *testing.T) {
	for _, tc := range []struct {
		name  string
		qlen  int
		queue int // frames the software queue holds
	}{{"no-queue", -1, 0}, {"queue-8", 8, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			const ring, writes = 4, 20
			a, _ := newPair(t, 0, 0, ring, netstack.Options{TxQueueLen: tc.qlen})
			if err := ping(t, a, addrB, []byte("warm arp"), 10*time.Second); err != nil {
				t.Fatal(err)
			}
			base := a.ep.Stats.TxFrames.Load()
			a.nic.HoldTX(true)
			frame := func() stack.PacketBufferList {
				var l stack.PacketBufferList
				pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{
					ReserveHeaderBytes: 14,
					Payload:            buffer.MakeWithData(make([]byte, 100)),
				})
				pkt.NetworkProtocolNumber = ipv4.ProtocolNumber
				pkt.EgressRoute.RemoteLinkAddress = tcpip.LinkAddress(macB[:])
				a.ep.AddHeader(pkt)
				l.PushBack(pkt)
				return l
			}
			done := make(chan int)
			go func() {
				full := 0
				for i := 0; i < writes; i++ {
					l := frame()
					if _, e := a.ep.WritePackets(l); e != nil {
						if _, ok := e.(*tcpip.ErrNoBufferSpace); !ok {
							t.Errorf("WritePackets error %v, want ErrNoBufferSpace", e)
						}
						full++
					}
					l.DecRef()
				}
				done <- full
			}()
			var full int
			select {
			case full = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("WritePackets blocked on a full TX ring")
			}
			// The ring, the queue, and at most one frame the engine took
			// before it noticed the hold.
			most, least := writes-ring-tc.queue, writes-ring-tc.queue-1
			st := &a.ep.Stats
			if full < least || full > most || uint64(full) != st.TxRingFull.Load() {
				t.Fatalf("%d writes refused, TxRingFull %d; want %d..%d and equal", full, st.TxRingFull.Load(), least, most)
			}
			if st.TxQueued.Load() != uint64(tc.queue) || a.ep.Queued() != tc.queue {
				t.Fatalf("TxQueued %d, want %d", st.TxQueued.Load(), tc.queue)
			}
			a.nic.HoldTX(false)
			// Every accepted frame must reach the NIC without any further
			// WritePackets call: TxReady drains the queue. (>=: the stack
			// may send a neighbour probe of its own meanwhile.)
			want := base + uint64(writes-full)
			for deadline := time.Now().Add(10 * time.Second); st.TxFrames.Load() < want || a.ep.Queued() > 0 || a.nic.Queued() > 0; {
				if time.Now().After(deadline) {
					t.Fatalf("TxFrames %d (want %d), queue %d, ring %d after release",
						st.TxFrames.Load(), want, a.ep.Queued(), a.nic.Queued())
				}
				time.Sleep(time.Millisecond)
			}
			if err := ping(t, a, addrB, []byte("after drain"), 10*time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLinkStateReachesStack: carrier loss disables the gVisor NIC and
// drops transmissions with a count; carrier gain restores connectivity.
func TestLinkStateReachesStack(t *testing.T) {
	a, _ := newPair(t, 0, 0, 64)
	if err := ping(t, a, addrB, []byte("up"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	changed := make(chan gnet.LinkState, 4)
	a.ep.OnLinkChange(func(ls gnet.LinkState) { changed <- ls })
	a.nic.SetLink(false)
	if ls := <-changed; ls.Up {
		t.Fatal("reported link up after cable pull")
	}
	if a.s.CheckNIC(1) {
		t.Fatal("gVisor NIC still enabled with carrier down")
	}
	if a.ep.LinkUp() {
		t.Fatal("endpoint still reports link up")
	}
	var l stack.PacketBufferList
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{ReserveHeaderBytes: 14, Payload: buffer.MakeWithData(make([]byte, 64))})
	a.ep.AddHeader(pkt)
	l.PushBack(pkt)
	if _, e := a.ep.WritePackets(l); e == nil {
		t.Fatal("WritePackets succeeded with link down")
	}
	l.DecRef()
	if a.ep.Stats.TxLinkDown.Load() != 1 {
		t.Fatalf("TxLinkDown = %d, want 1", a.ep.Stats.TxLinkDown.Load())
	}
	a.nic.SetLink(true)
	if ls := <-changed; !ls.Up || ls.SpeedMbps != 1000 {
		t.Fatalf("link change %+v, want up at 1000", ls)
	}
	if !a.s.CheckNIC(1) {
		t.Fatal("gVisor NIC not re-enabled")
	}
	if err := ping(t, a, addrB, []byte("back"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestNewEndpointRejectsBadNIC(t *testing.T) {
	n1, _ := nictest.Pair(nictest.Config{MAC: gnet.MAC{0x01, 0, 0, 0, 0, 1}}, nictest.Config{MAC: macB})
	if _, err := netstack.NewEndpoint(n1); err == nil {
		t.Error("multicast MAC accepted")
	}
	n2, _ := nictest.Pair(nictest.Config{MAC: macA, MTU: 9000}, nictest.Config{MAC: macB})
	if _, err := netstack.NewEndpoint(n2); err == nil {
		t.Error("MTU larger than an RX buffer accepted")
	}
}

// recordingDispatcher records the last packet delivered to it: its
// protocol, type, the memory gVisor holds it in (the first slice, from
// the link header on) and a copy of its bytes, unless noCopy is set (it
// then records only protocol and type, allocating nothing).
type recordingDispatcher struct {
	proto  tcpip.NetworkProtocolNumber
	first  []byte
	frame  []byte
	typ    tcpip.PacketType
	noCopy bool
}

func (r *recordingDispatcher) DeliverNetworkPacket(p tcpip.NetworkProtocolNumber, pkt *stack.PacketBuffer) {
	r.proto, r.typ = p, pkt.PktType
	if !r.noCopy {
		r.first = pkt.AsSlices()[0]
		r.frame = pkt.ToView().ToSlice()
	}
}
func (*recordingDispatcher) DeliverLinkPacket(tcpip.NetworkProtocolNumber, *stack.PacketBuffer) {}

// arpFrame is a broadcast ARP frame of 60 bytes from macB.
func arpFrame() []byte {
	f := make([]byte, 60)
	copy(f[0:6], macA[:])
	copy(f[6:12], macB[:])
	f[12], f[13] = 0x08, 0x06
	return f
}

// recordingEndpoint is an Endpoint on a nictest NIC delivering to a
// recordingDispatcher, closed when the test ends.
func recordingEndpoint(t *testing.T) (*netstack.Endpoint, *recordingDispatcher) {
	t.Helper()
	n, _ := nictest.Pair(nictest.Config{MAC: macA}, nictest.Config{MAC: macB})
	ep, err := netstack.NewEndpoint(n)
	if err != nil {
		t.Fatal(err)
	}
	d := &recordingDispatcher{}
	ep.Attach(d)
	t.Cleanup(ep.Close)
	return ep, d
}

// TestReceiveCopiesOnce: a borrowed frame reaches gVisor in a buffer of
// the Endpoint's (one copy), which keeps its bytes after the driver
// reused its own buffer; Receive allocates nothing.
func TestReceiveCopiesOnce(t *testing.T) {
	ep, d := recordingEndpoint(t)
	dma := arpFrame()
	want := append([]byte(nil), dma...)
	ep.Receive(dma)
	if d.first == nil {
		t.Fatal("frame not delivered")
	}
	if &d.first[0] == &dma[0] {
		t.Fatal("gVisor got the driver's borrowed buffer, which the driver reuses")
	}
	clear(dma) // the driver re-arms its buffer
	if !bytes.Equal(d.frame, want) {
		t.Fatal("delivered frame changed when the driver reused its buffer")
	}
	if d.proto != 0x0806 || d.typ != tcpip.PacketHost {
		t.Fatalf("proto %#x type %v", d.proto, d.typ)
	}
	d.noCopy = true
	copy(dma, want)
	if a := testing.AllocsPerRun(100, func() { ep.Receive(dma) }); a != 0 && !raceEnabled {
		t.Fatalf("%v allocations per received frame", a)
	}
}

// TestReceiveViewIsZeroCopy: a frame handed over in a view (the bridge's
// shared copy) is parsed by gVisor in that view's own memory.
func TestReceiveViewIsZeroCopy(t *testing.T) {
	ep, d := recordingEndpoint(t)
	v := buffer.NewViewWithData(arpFrame())
	mem := &v.AsSlice()[0]
	ep.ReceiveView(v)
	if d.first == nil {
		t.Fatal("frame not delivered")
	}
	if &d.first[0] != mem {
		t.Fatal("gVisor got a copy of the view, not the view")
	}
	// Refused frames release the reference they were given.
	bad := buffer.NewViewWithData(arpFrame()[:10])
	ep.ReceiveView(bad)
	if ep.Stats.RxMalformed.Load() != 1 {
		t.Fatal("short frame not counted")
	}
}

func TestStartFailureReported(t *testing.T) {
	n, _ := nictest.Pair(nictest.Config{MAC: macA}, nictest.Config{MAC: macB})
	if err := n.Start(recordingDispatcherHandler{}); err != nil {
		t.Fatal(err)
	}
	ep, err := netstack.NewEndpoint(n)
	if err != nil {
		t.Fatal(err)
	}
	ep.Attach(&recordingDispatcher{})
	if ep.IsAttached() || ep.StartError() == nil {
		t.Fatal("NIC start failure hidden")
	}
	n.Stop()
}

type recordingDispatcherHandler struct{}

func (recordingDispatcherHandler) Receive([]byte)             {}
func (recordingDispatcherHandler) LinkChanged(gnet.LinkState) {}

// synAckSpy is a NIC that records the TCP options of the SYN-ACKs its
// stack sends.
type synAckSpy struct {
	gnet.NIC
	mu   sync.Mutex
	opts [][]byte
}

func (s *synAckSpy) Transmit(tb gnet.TxBuf) error {
	var f []byte
	for _, seg := range tb.Segments() {
		f = append(f, seg...)
	}
	if len(f) >= 14+20+20 && f[12] == 0x08 && f[13] == 0x00 {
		ip := header.IPv4(f[14:])
		tcp := header.TCP(f[14+int(ip.HeaderLength()):])
		if ip.Protocol() == uint8(header.TCPProtocolNumber) && tcp.Flags() == header.TCPFlagSyn|header.TCPFlagAck {
			s.mu.Lock()
			s.opts = append(s.opts, append([]byte(nil), tcp.Options()...))
			s.mu.Unlock()
		}
	}
	return s.NIC.Transmit(tb)
}

// TestNoTCPTimestamps: a stack behind an Endpoint with NoTCPTimestamps
// answers a connection request that offers timestamps without them (so
// the connection runs without), and the connection carries data; the
// same stack without the option accepts timestamps, which shows the spy
// sees them.
func TestNoTCPTimestamps(t *testing.T) {
	for _, off := range []bool{true, false} {
		t.Run(fmt.Sprintf("NoTCPTimestamps=%v", off), func(t *testing.T) {
			na, nb := nictest.Pair(nictest.Config{MAC: macA}, nictest.Config{MAC: macB})
			spy := &synAckSpy{NIC: nb}
			a := newHost(t, na, addrA, netstack.Options{})
			sb, epb := nictest.NewStack(t, spy, addrB, netstack.Options{NoTCPTimestamps: off})
			ln, err := gonet.ListenTCP(sb, tcpip.FullAddress{NIC: 1, Addr: addrB, Port: 8080}, ipv4.ProtocolNumber)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			got := make(chan string, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					got <- err.Error()
					return
				}
				defer c.Close()
				b, _ := io.ReadAll(c)
				got <- string(b)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := gonet.DialContextTCP(ctx, a.s, tcpip.FullAddress{NIC: 1, Addr: addrB, Port: 8080}, ipv4.ProtocolNumber)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte("no timestamps")); err != nil {
				t.Fatal(err)
			}
			c.Close()
			select {
			case s := <-got:
				if s != "no timestamps" {
					t.Fatalf("server read %q", s)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("transfer timed out")
			}
			spy.mu.Lock()
			defer spy.mu.Unlock()
			if len(spy.opts) != 1 {
				t.Fatalf("%d SYN-ACKs sent", len(spy.opts))
			}
			ts := header.ParseSynOptions(spy.opts[0], true).TS
			if ts == off {
				t.Fatalf("SYN-ACK offers timestamps: %v", ts)
			}
			want := uint64(0)
			if off {
				want = 1
			}
			if n := epb.Stats.TimestampsRefused.Load(); n != want {
				t.Fatalf("TimestampsRefused = %d, want %d", n, want)
			}
		})
	}
}
