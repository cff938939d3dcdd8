package netstack

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// frameNIC is a NIC that keeps a copy of every frame it is given and
// releases the TxBuf at once, as a copying driver does.
type frameNIC struct {
	caps   gnet.Capabilities
	mtu    int
	frames [][]byte
	full   int // refuse with ErrTxFull after this many frames (0: never)
}

func (n *frameNIC) MACAddress() gnet.MAC            { return gnet.MAC{2, 0, 0, 0, 0, 1} }
func (n *frameNIC) MTU() int                        { return n.mtu }
func (n *frameNIC) Capabilities() gnet.Capabilities { return n.caps }
func (n *frameNIC) Link() gnet.LinkState            { return gnet.LinkState{Up: true} }
func (n *frameNIC) Start(gnet.Handler) error        { return nil }
func (n *frameNIC) Stop()                           {}
func (n *frameNIC) Transmit(tb gnet.TxBuf) error {
	if n.full > 0 && len(n.frames) >= n.full {
		return gnet.ErrTxFull
	}
	if len(tb.Segments()) > 1 && n.caps&gnet.CapScatterGather == 0 {
		return fmt.Errorf("gather list on a NIC without scatter-gather")
	}
	var f []byte
	for _, s := range tb.Segments() {
		f = append(f, s...)
	}
	if len(f) != tb.Len() {
		return fmt.Errorf("Len %d, segments hold %d", tb.Len(), len(f))
	}
	if c, ok := tb.(gnet.TxChecksum); ok {
		if start, field, partial := c.ChecksumPartial(); partial {
			if n.caps&gnet.CapTxChecksumCopy == 0 {
				return fmt.Errorf("a partial checksum for a NIC that does not complete them")
			}
			// Completed as a driver's copy does, by the reference sum.
			binary.BigEndian.PutUint16(f[field:], ^refSum(f[start:]))
		}
	}
	n.frames = append(n.frames, f)
	tb.Release()
	return nil
}

// gsoCase describes an offloaded packet as gVisor's TCP builds it.
type gsoCase struct {
	v6      bool
	mss     int
	views   []int // payload view sizes: odd ones test the checksum's realignment
	flags   header.TCPFlags
	opts    []byte
	seq     uint32
	ipID    uint16
	ipFlags uint8
}

var (
	src4 = tcpip.AddrFrom4([4]byte{192, 168, 1, 1})
	dst4 = tcpip.AddrFrom4([4]byte{192, 168, 1, 100})
	src6 = tcpip.AddrFrom16([16]byte{0: 0xfd, 15: 1})
	dst6 = tcpip.AddrFrom16([16]byte{0: 0xfd, 14: 1})
)

// build returns the packet and its payload.
func (c gsoCase) build(rng *rand.Rand) (*stack.PacketBuffer, []byte) {
	var payload []byte
	var buf buffer.Buffer
	for _, n := range c.views {
		b := make([]byte, n)
		rng.Read(b)
		payload = append(payload, b...)
		buf.Append(buffer.NewViewWithData(b))
	}
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{ReserveHeaderBytes: maxSegHeaders, Payload: buf})
	tcp := header.TCP(pkt.TransportHeader().Push(header.TCPMinimumSize + len(c.opts)))
	tcp.Encode(&header.TCPFields{SrcPort: 5201, DstPort: 40000, SeqNum: c.seq, AckNum: 0x01020304,
		DataOffset: uint8(len(tcp)), Flags: c.flags, WindowSize: 5000})
	copy(tcp[header.TCPMinimumSize:], c.opts)
	tcp.SetChecksum(0x1234) // what gVisor leaves is a partial sum; the Endpoint must not rely on it
	gso := stack.GSO{NeedsCsum: true, CsumOffset: header.TCPChecksumOffset, MSS: uint16(c.mss), MaxSize: 1 << 16}
	if c.v6 {
		ip := header.IPv6(pkt.NetworkHeader().Push(header.IPv6MinimumSize))
		ip.Encode(&header.IPv6Fields{PayloadLength: uint16(len(tcp) + len(payload)), TransportProtocol: header.TCPProtocolNumber,
			HopLimit: 64, SrcAddr: src6, DstAddr: dst6})
		gso.Type, gso.L3HdrLen = stack.GSOTCPv6, header.IPv6MinimumSize
		pkt.NetworkProtocolNumber = header.IPv6ProtocolNumber
	} else {
		ip := header.IPv4(pkt.NetworkHeader().Push(header.IPv4MinimumSize))
		ip.Encode(&header.IPv4Fields{TotalLength: uint16(header.IPv4MinimumSize + len(tcp) + len(payload)), ID: c.ipID,
			Flags: c.ipFlags, TTL: 64, Protocol: uint8(header.TCPProtocolNumber), SrcAddr: src4, DstAddr: dst4})
		ip.SetChecksum(^ip.CalculateChecksum())
		gso.Type, gso.L3HdrLen = stack.GSOTCPv4, header.IPv4MinimumSize
		pkt.NetworkProtocolNumber = header.IPv4ProtocolNumber
	}
	eth := header.Ethernet(pkt.LinkHeader().Push(header.EthernetMinimumSize))
	eth.Encode(&header.EthernetFields{SrcAddr: "\x02\x00\x00\x00\x00\x01", DstAddr: "\x02\x00\x00\x00\x00\x02",
		Type: pkt.NetworkProtocolNumber})
	pkt.GSOOptions = gso
	return pkt, payload
}

// checkFrames checks the frames cut from c's packet: sizes, every header
// field that changes from frame to frame, both checksums, and that the
// payloads put together are the packet's.
func checkFrames(t *testing.T, c gsoCase, frames [][]byte, payload []byte) {
	t.Helper()
	want := (len(payload) + c.mss - 1) / c.mss
	if want == 0 {
		want = 1
	}
	if len(frames) != want {
		t.Fatalf("%d frames, want %d", len(frames), want)
	}
	var got []byte
	for i, f := range frames {
		first, last := i == 0, i == len(frames)-1
		if binary.BigEndian.Uint16(f[12:14]) != map[bool]uint16{false: 0x0800, true: 0x86dd}[c.v6] {
			t.Fatalf("frame %d: EtherType %#x", i, f[12:14])
		}
		ipb := f[header.EthernetMinimumSize:]
		var tcp header.TCP
		var pseudo []byte
		if c.v6 {
			ip := header.IPv6(ipb)
			if int(ip.PayloadLength()) != len(ipb)-header.IPv6MinimumSize {
				t.Fatalf("frame %d: IPv6 payload length %d, frame carries %d", i, ip.PayloadLength(), len(ipb)-header.IPv6MinimumSize)
			}
			tcp = header.TCP(ipb[header.IPv6MinimumSize:])
			pseudo = append(append([]byte{}, ipb[8:40]...), 0, 0, byte(len(tcp)>>8), byte(len(tcp)), 0, 0, 0, 6)
		} else {
			ip := header.IPv4(ipb)
			if !ip.IsValid(len(ipb)) || int(ip.TotalLength()) != len(ipb) {
				t.Fatalf("frame %d: IPv4 total length %d, frame carries %d", i, ip.TotalLength(), len(ipb))
			}
			if refSum(ipb[:ip.HeaderLength()]) != 0xffff {
				t.Fatalf("frame %d: bad IPv4 header checksum", i)
			}
			if ip.ID() != c.ipID+uint16(i) {
				t.Fatalf("frame %d: IPv4 ID %#x, want %#x", i, ip.ID(), c.ipID+uint16(i))
			}
			if ip.Flags() != c.ipFlags || ip.TTL() != 64 {
				t.Fatalf("frame %d: IPv4 flags %#x TTL %d changed", i, ip.Flags(), ip.TTL())
			}
			tcp = header.TCP(ipb[ip.HeaderLength():])
			pseudo = append(append([]byte{}, ipb[12:20]...), 0, 6, byte(len(tcp)>>8), byte(len(tcp)))
		}
		if refSum(pseudo, tcp) != 0xffff {
			t.Fatalf("frame %d: bad TCP checksum", i)
		}
		if tcp.SequenceNumber() != c.seq+uint32(i*c.mss) {
			t.Fatalf("frame %d: seq %#x, want %#x", i, tcp.SequenceNumber(), c.seq+uint32(i*c.mss))
		}
		wantFlags := c.flags
		if !last {
			wantFlags &^= header.TCPFlagFin | header.TCPFlagPsh
		}
		if !first {
			wantFlags &^= header.TCPFlagCwr
		}
		if tcp.Flags() != wantFlags {
			t.Fatalf("frame %d: flags %v, want %v", i, tcp.Flags(), wantFlags)
		}
		if tcp.AckNumber() != 0x01020304 || tcp.WindowSize() != 5000 || !bytes.Equal(tcp[20:tcp.DataOffset()], c.opts) {
			t.Fatalf("frame %d: ACK, window or options changed", i)
		}
		seg := tcp[tcp.DataOffset():]
		if len(seg) > c.mss || (!last && len(seg) != c.mss) {
			t.Fatalf("frame %d: %d payload bytes, MSS %d", i, len(seg), c.mss)
		}
		got = append(got, seg...)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("payload differs: got %d bytes, sent %d", len(got), len(payload))
	}
}

var gsoCases = map[string]gsoCase{
	"ipv4":               {mss: 1460, views: []int{1460 * 3}, flags: header.TCPFlagAck | header.TCPFlagPsh},
	"ipv4 odd views":     {mss: 1448, views: []int{1, 999, 2047, 3, 1500, 777}, flags: header.TCPFlagAck | header.TCPFlagPsh | header.TCPFlagFin | header.TCPFlagCwr, opts: []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}},
	"ipv4 wraps":         {mss: 536, views: []int{4000}, flags: header.TCPFlagAck, seq: 0xffffff00, ipID: 0xfffe, ipFlags: header.IPv4FlagDontFragment},
	"ipv4 short tail":    {mss: 1460, views: []int{1460*21 + 17}, flags: header.TCPFlagAck | header.TCPFlagPsh},
	"ipv4 one segment":   {mss: 1460, views: []int{100}, flags: header.TCPFlagAck | header.TCPFlagPsh},
	"ipv4 no payload":    {mss: 1460, flags: header.TCPFlagAck},
	"ipv6":               {v6: true, mss: 1440, views: []int{1000, 1000, 1000, 1001}, flags: header.TCPFlagAck | header.TCPFlagFin | header.TCPFlagCwr},
	"ipv6 options, odd":  {v6: true, mss: 1427, views: []int{5000, 3}, flags: header.TCPFlagAck, opts: []byte{1, 1, 1, 0}},
	"ipv6 one segment":   {v6: true, mss: 1440, views: []int{1}, flags: header.TCPFlagAck | header.TCPFlagPsh},
	"ipv4 many segments": {mss: 1460, views: []int{16 << 10, 16 << 10, 11}, flags: header.TCPFlagAck},
}

// TestSegmentOffload cuts offloaded packets, IPv4 and IPv6, on a NIC that
// gathers and one that does not, each completing partial checksums as it
// copies or not (frameNIC completes them as a driver would), and checks
// every frame.
func TestSegmentOffload(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for name, c := range gsoCases {
		for _, caps := range []gnet.Capabilities{0, gnet.CapScatterGather, gnet.CapTxChecksumCopy, gnet.CapScatterGather | gnet.CapTxChecksumCopy} {
			t.Run(fmt.Sprintf("%s/caps=%d", name, caps), func(t *testing.T) {
				nic := &frameNIC{caps: caps, mtu: 1500}
				e, err := NewEndpoint(nic)
				if err != nil {
					t.Fatal(err)
				}
				pkt, payload := c.build(rng)
				var l stack.PacketBufferList
				l.PushBack(pkt)
				if n, err := e.WritePackets(l); n != 1 || err != nil {
					t.Fatalf("WritePackets = %d, %v", n, err)
				}
				pkt.DecRef()
				checkFrames(t, c, nic.frames, payload)
				if got := e.Stats.TxFrames.Load(); got != uint64(len(nic.frames)) {
					t.Fatalf("TxFrames %d, NIC got %d", got, len(nic.frames))
				}
				if e.Stats.TxOffloaded.Load() != 1 || e.Stats.TxErrors.Load() != 0 {
					t.Fatalf("TxOffloaded %d, TxErrors %d", e.Stats.TxOffloaded.Load(), e.Stats.TxErrors.Load())
				}
			})
		}
	}
}

// TestSegmentOffloadRefusesMalformed: a packet the Endpoint cannot cut is
// dropped and counted, whole, and nothing reaches the wire.
func TestSegmentOffloadRefusesMalformed(t *testing.T) {
	base := gsoCase{mss: 1460, views: []int{3000}, flags: header.TCPFlagAck}
	for name, spoil := range map[string]func(pkt *stack.PacketBuffer){
		"not IP":       func(p *stack.PacketBuffer) { p.LinkHeader().Slice()[12] = 0x08; p.LinkHeader().Slice()[13] = 0x06 },
		"not TCP":      func(p *stack.PacketBuffer) { p.NetworkHeader().Slice()[9] = 17 },
		"IP options":   func(p *stack.PacketBuffer) { p.NetworkHeader().Slice()[0] = 0x46 },
		"IP version":   func(p *stack.PacketBuffer) { p.NetworkHeader().Slice()[0] = 0x65 },
		"TCP offset":   func(p *stack.PacketBuffer) { p.TransportHeader().Slice()[12] = 6 << 4 },
		"TCP offset 0": func(p *stack.PacketBuffer) { p.TransportHeader().Slice()[12] = 0 },
		"no MSS":       func(p *stack.PacketBuffer) { p.GSOOptions.MSS = 0 },
		"MSS over MTU": func(p *stack.PacketBuffer) { p.GSOOptions.MSS = 1480 },
	} {
		t.Run(name, func(t *testing.T) {
			nic := &frameNIC{caps: gnet.CapScatterGather, mtu: 1500}
			e, err := NewEndpoint(nic)
			if err != nil {
				t.Fatal(err)
			}
			pkt, _ := base.build(rand.New(rand.NewSource(2)))
			spoil(pkt)
			var l stack.PacketBufferList
			l.PushBack(pkt)
			n, terr := e.WritePackets(l)
			pkt.DecRef()
			if n != 0 || terr == nil {
				t.Fatalf("WritePackets = %d, %v; want 0 and an error", n, terr)
			}
			if len(nic.frames) != 0 || e.Stats.TxErrors.Load() != 1 || e.Stats.TxFrames.Load() != 0 {
				t.Fatalf("%d frames sent, TxErrors %d, TxFrames %d", len(nic.frames), e.Stats.TxErrors.Load(), e.Stats.TxFrames.Load())
			}
		})
	}
}

// TestSegmentOffloadRingFull: frames cut while the ring and the queue are
// full are dropped with the rest of the packet and counted as frames.
func TestSegmentOffloadRingFull(t *testing.T) {
	nic := &frameNIC{caps: gnet.CapScatterGather, mtu: 1500, full: 2}
	e, err := NewEndpointOptions(nic, Options{TxQueueLen: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := gsoCase{mss: 1000, views: []int{10000}, flags: header.TCPFlagAck}
	pkt, _ := c.build(rand.New(rand.NewSource(3)))
	var l stack.PacketBufferList
	l.PushBack(pkt)
	n, terr := e.WritePackets(l)
	pkt.DecRef()
	if _, ok := terr.(*tcpip.ErrNoBufferSpace); n != 0 || !ok {
		t.Fatalf("WritePackets = %d, %v; want 0, ErrNoBufferSpace", n, terr)
	}
	// 2 sent, 1 queued, the fourth refused with the 6 not cut yet.
	if len(nic.frames) != 2 || e.Queued() != 1 || e.Stats.TxRingFull.Load() != 7 {
		t.Fatalf("sent %d, queued %d, ring-full drops %d", len(nic.frames), e.Queued(), e.Stats.TxRingFull.Load())
	}
	e.flushTxQueue() // the queued frame's reference goes back
}

// TestSegmentOffloadOff: with NoSegmentationOffload the stack is told so.
func TestSegmentOffloadOff(t *testing.T) {
	on, _ := NewEndpoint(&frameNIC{mtu: 1500})
	off, _ := NewEndpointOptions(&frameNIC{mtu: 1500}, Options{NoSegmentationOffload: true})
	if on.SupportedGSO() != stack.HostGSOSupported || on.GSOMaxSize() != 22*1460+header.TCPTotalHeaderMaximumSize+1 {
		t.Fatalf("default: %v, max %d", on.SupportedGSO(), on.GSOMaxSize())
	}
	if off.SupportedGSO() != stack.GSONotSupported || off.GSOMaxSize() != 0 {
		t.Fatalf("off: %v, max %d", off.SupportedGSO(), off.GSOMaxSize())
	}
}

// FuzzSegmentOffload feeds the segmenter arbitrary headers, payload
// layouts and MSS values: it must never panic, and what it does send must
// be within the MTU and carry the payload in order.
func FuzzSegmentOffload(f *testing.F) {
	rng := rand.New(rand.NewSource(4))
	for _, c := range gsoCases {
		pkt, _ := c.build(rng)
		hdr := append([]byte{}, pkt.LinkHeader().Slice()...)
		hdr = append(hdr, pkt.NetworkHeader().Slice()...)
		hdr = append(hdr, pkt.TransportHeader().Slice()...)
		pkt.DecRef()
		f.Add(hdr, uint16(c.mss), uint16(len(c.views)*700+1), uint8(7), c.v6)
	}
	f.Fuzz(func(t *testing.T, hdr []byte, mss, size uint16, split uint8, v6 bool) {
		if len(hdr) > maxSegHeaders || size > 40000 {
			return
		}
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i * 7)
		}
		var buf buffer.Buffer
		for rest := payload; len(rest) > 0; {
			k := min(len(rest), int(split)*13+1)
			buf.Append(buffer.NewViewWithData(rest[:k]))
			rest = rest[k:]
		}
		pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{ReserveHeaderBytes: maxSegHeaders, Payload: buf})
		defer pkt.DecRef()
		copy(pkt.LinkHeader().Push(len(hdr)), hdr)
		pkt.GSOOptions = stack.GSO{Type: stack.GSOTCPv4, NeedsCsum: true, MSS: mss}
		if v6 {
			pkt.GSOOptions.Type = stack.GSOTCPv6
		}
		nic := &frameNIC{caps: gnet.CapScatterGather, mtu: 1500}
		e, err := NewEndpoint(nic)
		if err != nil {
			t.Fatal(err)
		}
		var l stack.PacketBufferList
		l.PushBack(pkt)
		if _, terr := e.WritePackets(l); terr != nil {
			if len(nic.frames) != 0 {
				t.Fatalf("refused (%v) after sending %d frames", terr, len(nic.frames))
			}
			return
		}
		var got []byte
		for _, fr := range nic.frames {
			if len(fr) > 1500+header.EthernetMinimumSize || len(fr) < len(hdr) {
				t.Fatalf("frame of %d bytes", len(fr))
			}
			got = append(got, fr[len(hdr):]...)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("payload differs")
		}
	})
}

// BenchmarkWriteOffloaded sends 22 full segments as one offloaded packet;
// BenchmarkWriteSegments, its baseline, as 22 packets the stack cut. Both
// to a NIC that gathers and does nothing else, so the figures are the
// Endpoint's own cost per wire frame, checksum included (the stack
// computes the baseline's before WritePackets, so it is added there).
func BenchmarkWriteOffloaded(b *testing.B) {
	benchWrite(b, gsoCase{mss: 1460, views: []int{22 * 1460}, flags: header.TCPFlagAck}, 1)
}

func BenchmarkWriteSegments(b *testing.B) {
	benchWrite(b, gsoCase{mss: 1460, views: []int{1460}, flags: header.TCPFlagAck}, 22)
}

// nullNIC takes frames and releases them at once.
type nullNIC struct{ frameNIC }

func (n *nullNIC) Transmit(tb gnet.TxBuf) error { tb.Release(); return nil }

func benchWrite(b *testing.B, c gsoCase, packets int) {
	e, err := NewEndpoint(&nullNIC{frameNIC{caps: gnet.CapScatterGather, mtu: 1500}})
	if err != nil {
		b.Fatal(err)
	}
	pkts := make([]*stack.PacketBuffer, packets)
	for i := range pkts {
		pkts[i], _ = c.build(rand.New(rand.NewSource(5)))
		if packets > 1 {
			pkts[i].GSOOptions = stack.GSO{} // as the stack cut it: checksum done
		}
	}
	var l stack.PacketBufferList // holds the references: WritePackets takes its own
	for _, p := range pkts {
		l.PushBack(p)
	}
	b.ReportAllocs()
	b.SetBytes(22 * 1460)
	b.ResetTimer()
	for range b.N {
		if packets > 1 {
			for _, p := range pkts {
				// What the stack spends on each segment's checksum.
				tcp := header.TCP(p.TransportHeader().Slice())
				tcp.SetChecksum(^onesSumFast(p))
			}
		}
		if _, err := e.WritePackets(l); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	l.Reset()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*22), "ns/frame")
}

// onesSumFast is the checksum the stack computes for a segment it cut,
// with the same package the Endpoint uses.
func onesSumFast(p *stack.PacketBuffer) uint16 {
	return p.Data().Checksum()
}

// batchNIC is a frameNIC that batches its doorbells (net.TxBatcher) and
// logs the calls: "[" a batch's begin, "]" its end, "f" a frame.
type batchNIC struct {
	frameNIC
	log   []byte
	depth int
}

func (n *batchNIC) TxBatchBegin() { n.depth++; n.log = append(n.log, '[') }
func (n *batchNIC) TxBatchEnd()   { n.depth--; n.log = append(n.log, ']') }
func (n *batchNIC) Transmit(tb gnet.TxBuf) error {
	err := n.frameNIC.Transmit(tb)
	if err == nil {
		n.log = append(n.log, 'f')
	}
	return err
}

// TestSegmentOffloadBatches: the frames cut from one offloaded packet go
// to a NIC that batches its doorbells (net.TxBatcher) in one batch; a
// lone frame (a pure ACK) goes without one; frames queued behind a full
// ring are drained in a batch too, and every batch is ended.
func TestSegmentOffloadBatches(t *testing.T) {
	nic := &batchNIC{frameNIC: frameNIC{caps: gnet.CapScatterGather, mtu: 1500}}
	e, err := NewEndpoint(nic)
	if err != nil {
		t.Fatal(err)
	}
	write := func(c gsoCase) {
		t.Helper()
		pkt, _ := c.build(rand.New(rand.NewSource(4)))
		var l stack.PacketBufferList
		l.PushBack(pkt)
		if n, err := e.WritePackets(l); n != 1 || err != nil {
			t.Fatalf("WritePackets = %d, %v", n, err)
		}
		pkt.DecRef()
	}
	write(gsoCase{mss: 1000, views: []int{4500}, flags: header.TCPFlagAck})
	write(gsoCase{mss: 1000, views: []int{}, flags: header.TCPFlagAck})
	if got := string(nic.log); got != "[fffff]f" {
		t.Fatalf("calls %q, want one batch of the 5 frames, then the ACK alone", got)
	}

	nic.log, nic.full = nil, len(nic.frames)+2
	write(gsoCase{mss: 1000, views: []int{4500}, flags: header.TCPFlagAck})
	nic.full = 0
	e.TxReady()
	if got := string(nic.log); got != "[ff][fff]" || e.Queued() != 0 || nic.depth != 0 {
		t.Fatalf("calls %q (%d queued, %d batches open), want the queued three drained in a batch", got, e.Queued(), nic.depth)
	}
}

// qdiscCase returns an Endpoint on a NIC that drops what it is sent, and
// a full-sized TCP segment for it (its checksum done, as the stack sends
// one it did not offload).
func qdiscCase(tb testing.TB) (*Endpoint, *stack.PacketBuffer) {
	tb.Helper()
	e, err := NewEndpoint(&nullNIC{frameNIC{caps: gnet.CapScatterGather, mtu: 1500}})
	if err != nil {
		tb.Fatal(err)
	}
	pkt, _ := gsoCase{mss: 1460, views: []int{1460}, flags: header.TCPFlagAck}.build(rand.New(rand.NewSource(5)))
	pkt.GSOOptions = stack.GSO{}
	return e, pkt
}

// delegatingWrite is what gVisor's default queueing discipline does with
// each packet the stack sends: a one-packet list, then WritePackets.
func delegatingWrite(e *Endpoint, pkt *stack.PacketBuffer) tcpip.Error {
	var l stack.PacketBufferList
	l.PushBack(pkt)
	_, err := e.WritePackets(l)
	return err
}

// TestQDiscAllocatesNothing: a packet sent through the Endpoint's QDisc
// costs no heap allocation, where gVisor's default discipline makes one
// (the check of the baseline keeps this test able to tell them apart).
func TestQDiscAllocatesNothing(t *testing.T) {
	e, pkt := qdiscCase(t)
	defer pkt.DecRef()
	q := e.QDisc()
	// Under the race detector sync.Pool drops a share of what it is
	// given, and pooled buffers then allocate: the figure is checked
	// without it.
	if a := testing.AllocsPerRun(100, func() { _ = q.WritePacket(pkt) }); a != 0 && !raceOn {
		t.Errorf("QDisc: %v allocations per packet", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = delegatingWrite(e, pkt) }); a < 1 {
		t.Errorf("baseline (gVisor's default discipline): %v allocations per packet, want at least 1", a)
	}
	if n := e.Stats.TxFrames.Load(); n < 200 {
		t.Errorf("%d frames sent, want 200 and more", n)
	}
}

// BenchmarkQDiscWritePacket sends one full segment per op through the
// Endpoint's QDisc; BenchmarkDelegatingWritePacket, its baseline, the way
// gVisor's default discipline does (-benchmem: allocs/op 0 against 1).
func BenchmarkQDiscWritePacket(b *testing.B) {
	e, pkt := qdiscCase(b)
	q := e.QDisc()
	b.ReportAllocs()
	for range b.N {
		_ = q.WritePacket(pkt)
	}
}

func BenchmarkDelegatingWritePacket(b *testing.B) {
	e, pkt := qdiscCase(b)
	b.ReportAllocs()
	for range b.N {
		_ = delegatingWrite(e, pkt)
	}
}
