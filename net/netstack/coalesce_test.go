package netstack

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	gnet "github.com/gowrt/gowrt/net"
	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// ipRecorder is a stack stand-in that keeps a copy of every IP packet
// delivered to it and, as gVisor's NIC does for each packet it takes, asks
// the endpoint whether the packet's checksums were verified.
type ipRecorder struct {
	e        *Endpoint
	pkts     [][]byte
	verified []bool
}

func (r *ipRecorder) DeliverNetworkPacket(_ tcpip.NetworkProtocolNumber, pkt *stack.PacketBuffer) {
	r.pkts = append(r.pkts, pkt.Data().AsRange().ToSlice())
	r.verified = append(r.verified, r.e.Capabilities()&stack.CapabilityRXChecksumOffload != 0)
}
func (*ipRecorder) DeliverLinkPacket(tcpip.NetworkProtocolNumber, *stack.PacketBuffer) {}

var (
	coMAC  = gnet.MAC{2, 0, 0, 0, 0, 1}
	peerIP = [4]byte{192, 168, 1, 100}
	ourIP  = [4]byte{192, 168, 1, 1}
)

// seg describes a TCP segment from the peer to the Endpoint.
type seg struct {
	seq     uint32
	payload []byte
	flags   header.TCPFlags
	ack     uint32
	win     uint16
	opts    []byte
	tos     uint8
	srcPort uint16
}

// frame builds seg as a frame with valid checksums.
func (s seg) frame() []byte {
	if s.flags == 0 {
		s.flags = header.TCPFlagAck
	}
	if s.ack == 0 {
		s.ack = 7000
	}
	if s.win == 0 {
		s.win = 4000
	}
	if s.srcPort == 0 {
		s.srcPort = 40000
	}
	thl := header.TCPMinimumSize + len(s.opts)
	tot := header.IPv4MinimumSize + thl + len(s.payload)
	b := make([]byte, header.EthernetMinimumSize+tot)
	header.Ethernet(b).Encode(&header.EthernetFields{DstAddr: tcpip.LinkAddress(coMAC[:]), SrcAddr: "\x02\x00\x00\x00\x00\x64", Type: header.IPv4ProtocolNumber})
	ip := header.IPv4(b[header.EthernetMinimumSize:])
	ip.Encode(&header.IPv4Fields{TOS: s.tos, TotalLength: uint16(tot), ID: 1, Flags: header.IPv4FlagDontFragment, TTL: 64,
		Protocol: uint8(header.TCPProtocolNumber), SrcAddr: tcpip.AddrFrom4(peerIP), DstAddr: tcpip.AddrFrom4(ourIP)})
	ip.SetChecksum(^refSum(ip[:header.IPv4MinimumSize]))
	tcp := header.TCP(ip[header.IPv4MinimumSize:])
	tcp.Encode(&header.TCPFields{SrcPort: s.srcPort, DstPort: 5201, SeqNum: s.seq, AckNum: s.ack, DataOffset: uint8(thl),
		Flags: s.flags, WindowSize: s.win})
	copy(tcp[header.TCPMinimumSize:], s.opts)
	copy(tcp[thl:], s.payload)
	tcp.SetChecksum(^refSum(tcpPseudo(ip), tcp))
	return b
}

func tcpPseudo(ip header.IPv4) []byte {
	n := int(ip.TotalLength()) - int(ip.HeaderLength())
	return append(append([]byte{}, ip[12:20]...), 0, 6, byte(n>>8), byte(n))
}

// checkPacket checks an IP packet the stack got: both checksums, the
// total length; it returns the TCP header and payload.
func checkPacket(t *testing.T, p []byte) (header.TCP, []byte) {
	t.Helper()
	ip := header.IPv4(p)
	if len(p) < header.IPv4MinimumSize || int(ip.TotalLength()) != len(p) {
		t.Fatalf("IP total length %d, packet %d bytes", ip.TotalLength(), len(p))
	}
	if refSum(ip[:ip.HeaderLength()]) != 0xffff {
		t.Fatal("bad IP header checksum")
	}
	tcp := header.TCP(ip[ip.HeaderLength():])
	if refSum(tcpPseudo(ip), tcp) != 0xffff {
		t.Fatal("bad TCP checksum")
	}
	return tcp, tcp[tcp.DataOffset():]
}

func coalescingEndpoint(t *testing.T) (*Endpoint, *ipRecorder) {
	t.Helper()
	e, err := NewEndpoint(&frameNIC{mtu: 1500})
	if err != nil {
		t.Fatal(err)
	}
	r := &ipRecorder{e: e}
	e.Attach(r)
	return e, r
}

func payload(n int, fill byte) []byte { return bytes.Repeat([]byte{fill}, n) }

// A delivery hands the Endpoint one frame, one of the two ways frames
// reach it: in a gVisor buffer, by reference (the bridge's host port), or
// borrowed for the call (a driver, the forwarding layer), the lender
// reusing the memory as soon as the call returns.
type delivery func(e *Endpoint, f []byte)

var deliveries = map[string]delivery{
	"view": func(e *Endpoint, f []byte) { e.ReceiveView(buffer.NewViewWithData(f)) },
	"lent": func(e *Endpoint, f []byte) {
		b := append([]byte{}, f...)
		e.Receive(b)
		for i := range b {
			b[i] = 0xa5
		}
	},
}

// inPass delivers the frames in one receive pass, by reference.
func inPass(e *Endpoint, frames ...[]byte) { inPassBy(e, deliveries["view"], frames...) }

// inPassBy delivers the frames in one receive pass with deliver.
func inPassBy(e *Endpoint, deliver delivery, frames ...[]byte) {
	e.ReceivePassOpen()
	for _, f := range frames {
		deliver(e, f)
	}
	e.ReceivePassDone()
}

// TestCoalesceMerges: a pass's consecutive segments reach the stack as one
// packet with valid checksums and every payload byte in order when the
// pass ends, PSH from one in the middle (a push does not end the run);
// odd payload lengths move later payloads to odd offsets.
func TestCoalesceMerges(t *testing.T) {
	for name, deliver := range deliveries {
		t.Run(name, func(t *testing.T) { testCoalesceMerges(t, deliver) })
	}
}

func testCoalesceMerges(t *testing.T, deliver delivery) {
	e, r := coalescingEndpoint(t)
	var want []byte
	var frames [][]byte
	seq := uint32(0xfffff000) // wraps
	for i, n := range []int{1460, 7, 1460, 1001, 2, 1460} {
		p := payload(n, byte(i+1))
		s := seg{seq: seq, payload: p}
		if i == 2 {
			s.flags = header.TCPFlagAck | header.TCPFlagPsh
		}
		frames = append(frames, s.frame())
		want = append(want, p...)
		seq += uint32(n)
	}
	e.ReceivePassOpen()
	for _, f := range frames {
		deliver(e, f)
	}
	if len(r.pkts) != 0 {
		t.Fatalf("%d packets before the pass ended; a push should not end the run", len(r.pkts))
	}
	e.ReceivePassDone()
	if len(r.pkts) != 1 {
		t.Fatalf("%d packets at the pass's end, want 1", len(r.pkts))
	}
	tcp, got := checkPacket(t, r.pkts[0])
	if !bytes.Equal(got, want) || tcp.SequenceNumber() != 0xfffff000 || tcp.Flags() != header.TCPFlagAck|header.TCPFlagPsh {
		t.Fatalf("merged packet: %d payload bytes (want %d), seq %#x, flags %v", len(got), len(want), tcp.SequenceNumber(), tcp.Flags())
	}
	if e.Stats.RxFrames.Load() != 6 || e.Stats.RxCoalesced.Load() != 5 {
		t.Fatalf("RxFrames %d, RxCoalesced %d", e.Stats.RxFrames.Load(), e.Stats.RxCoalesced.Load())
	}
}

// TestCoalesceSplits: a segment that differs from the held ones in
// anything the stack acts on starts a packet of its own; each packet is
// valid and the payload arrives whole and in order.
func TestCoalesceSplits(t *testing.T) {
	for name, mod := range map[string]func(*seg){
		"gap":          func(s *seg) { s.seq++ },
		"ACK number":   func(s *seg) { s.ack++ },
		"window":       func(s *seg) { s.win++ },
		"options":      func(s *seg) { s.opts = []byte{1, 1, 1, 1} },
		"TOS (ECN CE)": func(s *seg) { s.tos = 3 },
		"other port":   func(s *seg) { s.srcPort = 40001 },
		"FIN":          func(s *seg) { s.flags = header.TCPFlagAck | header.TCPFlagFin },
		"URG":          func(s *seg) { s.flags = header.TCPFlagAck | header.TCPFlagUrg },
		"no payload":   func(s *seg) { s.payload = nil },
	} {
		for by, deliver := range deliveries {
			t.Run(name+"/"+by, func(t *testing.T) {
				e, r := coalescingEndpoint(t)
				s1 := seg{seq: 100, payload: payload(1000, 1)}
				s2 := seg{seq: 1100, payload: payload(1000, 2)}
				s3 := seg{seq: 2100, payload: payload(1000, 3)}
				mod(&s2)
				inPassBy(e, deliver, s1.frame(), s2.frame(), s3.frame())
				if len(r.pkts) < 2 {
					t.Fatalf("%d packets: the odd segment was merged", len(r.pkts))
				}
				var seqs []uint32
				for _, p := range r.pkts {
					tcp, _ := checkPacket(t, p)
					seqs = append(seqs, tcp.SequenceNumber())
				}
				if seqs[0] != 100 || seqs[1] != s2.seq {
					t.Fatalf("packets in the wrong order: seqs %v", seqs)
				}
			})
		}
	}
}

// TestCoalesceCorruptionCaught: a segment whose payload was corrupted
// (its checksum no longer matches) is not merged: it reaches the stack
// alone, unchanged and not vouched for, between the valid segments
// before and after it, which are vouched for.
func TestCoalesceCorruptionCaught(t *testing.T) {
	for name, deliver := range deliveries {
		t.Run(name, func(t *testing.T) { testCoalesceCorruptionCaught(t, deliver) })
	}
}

func testCoalesceCorruptionCaught(t *testing.T, deliver delivery) {
	e, r := coalescingEndpoint(t)
	f2 := seg{seq: 1100, payload: payload(1000, 2)}.frame()
	f2[len(f2)-10] ^= 0x40
	inPassBy(e, deliver, seg{seq: 100, payload: payload(1000, 1)}.frame(), f2, seg{seq: 2100, payload: payload(1000, 3)}.frame())
	if len(r.pkts) != 3 {
		t.Fatalf("%d packets, want the corrupted segment alone between the others", len(r.pkts))
	}
	if !bytes.Equal(r.pkts[1], f2[header.EthernetMinimumSize:]) {
		t.Fatal("the corrupted segment was changed")
	}
	if want := []bool{true, false, true}; !slices.Equal(r.verified, want) {
		t.Fatalf("verified %v, want %v", r.verified, want)
	}
	for _, i := range []int{0, 2} {
		checkPacket(t, r.pkts[i])
	}
	if e.Capabilities()&stack.CapabilityRXChecksumOffload != 0 {
		t.Fatal("checksum offload still reported after the deliveries")
	}
}

// TestCoalesceRefuses: frames coalescing must not touch pass alone and
// unchanged: outside a pass (nobody promised its end), a bad IP header
// checksum, IP options, a fragment, another MAC.
func TestCoalesceRefuses(t *testing.T) {
	e, r := coalescingEndpoint(t)
	a, b := seg{seq: 100, payload: payload(500, 1)}.frame(), seg{seq: 600, payload: payload(500, 2)}.frame()
	e.ReceiveView(buffer.NewViewWithData(a))
	e.ReceiveView(buffer.NewViewWithData(b))
	if len(r.pkts) != 2 {
		t.Fatalf("outside a pass: %d packets delivered at once, want 2", len(r.pkts))
	}
	for name, spoil := range map[string]func([]byte){
		"IP checksum": func(f []byte) { f[24] ^= 1 },
		"IP options":  func(f []byte) { f[14] = 0x46 },
		"fragment":    func(f []byte) { f[20] |= 0x20; ipSum(f) },
		"other MAC":   func(f []byte) { f[5] ^= 1 },
	} {
		for by, deliver := range deliveries {
			t.Run(name+"/"+by, func(t *testing.T) {
				e, r := coalescingEndpoint(t)
				a := seg{seq: 100, payload: payload(500, 1)}.frame()
				b := seg{seq: 600, payload: payload(500, 2)}.frame()
				spoil(b)
				inPassBy(e, deliver, a, b)
				if len(r.pkts) == 1 {
					t.Fatal("merged")
				}
				for i, p := range r.pkts {
					if f := [][]byte{a, b}[i]; len(r.pkts) == 2 && !bytes.Equal(p, f[header.EthernetMinimumSize:]) {
						t.Fatalf("packet %d changed", i)
					}
				}
			})
		}
	}
}

func ipSum(f []byte) {
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	ip.SetChecksum(0)
	ip.SetChecksum(^refSum(ip[:header.IPv4MinimumSize]))
}

// TestCoalesceLimit: at most maxCoalesce segments per packet.
func TestCoalesceLimit(t *testing.T) {
	for name, deliver := range deliveries {
		t.Run(name, func(t *testing.T) {
			e, r := coalescingEndpoint(t)
			var frames [][]byte
			for i := range maxCoalesce + 5 {
				frames = append(frames, seg{seq: uint32(i * 100), payload: payload(100, byte(i))}.frame())
			}
			inPassBy(e, deliver, frames...)
			if len(r.pkts) != 2 {
				t.Fatalf("%d packets, want 2", len(r.pkts))
			}
			if _, p := checkPacket(t, r.pkts[0]); len(p) != maxCoalesce*100 {
				t.Fatalf("first packet carries %d bytes", len(p))
			}
		})
	}
}

// TestCoalesceKeepsPayloadsInPlace: the merged packet is the fresh
// headers and then the frames' own memory, payload by payload: nothing
// is copied (gVisor's Buffer.Append would have moved bytes into the room
// left in the previous view's chunk).
func TestCoalesceKeepsPayloadsInPlace(t *testing.T) {
	var c coalescer
	var want []*byte
	for i, n := range []int{1000, 999, 1000} {
		f := seg{seq: uint32(100 + 1000*i), payload: payload(n, byte(i))}.frame()
		s, ok := mergeable(f, tcpip.LinkAddress(coMAC[:]))
		if !ok {
			t.Fatal("not mergeable")
		}
		sum, ok := verify(f, s)
		if !ok {
			t.Fatal("checksum")
		}
		v := buffer.NewViewWithData(f)
		want = append(want, &v.AsSlice()[tcpOff+s.thl])
		c.add(v, s, sum)
	}
	buf := c.merged()
	defer buf.Release()
	var got []*byte
	buf.SubApply(0, int(buf.Size()), func(v *buffer.View) { got = append(got, &v.AsSlice()[0]) })
	if len(got) != 1+len(want) || !slices.Equal(got[1:], want) {
		t.Fatalf("merged packet's views start at %p, want the headers then %p", got, want)
	}
}

// TestCoalesceCopiesIntoFewChunks: a full run of borrowed 1448-byte
// segments is copied into 6 chunks, not 44 buffers, which hold at most
// about twice the bytes merged; a lone segment takes one 2 KiB chunk.
func TestCoalesceCopiesIntoFewChunks(t *testing.T) {
	for _, tc := range []struct{ segs, chunks int }{{1, 1}, {3, 2}, {maxCoalesce, 6}} {
		var c coalescer
		for i := range tc.segs {
			f := seg{seq: uint32(1448 * i), payload: payload(1448, byte(i))}.frame()
			s, ok := mergeable(f, tcpip.LinkAddress(coMAC[:]))
			if !ok || !c.addCopy(f, s) {
				t.Fatal("not merged")
			}
		}
		buf := c.merged()
		var sizes []int
		held := 0
		buf.SubApply(0, int(buf.Size()), func(v *buffer.View) {
			sizes = append(sizes, v.Size())
			held += v.Capacity()
		})
		buf.Release()
		if len(sizes)-1 != tc.chunks || held > 2*tc.segs*1448+firstChunk {
			t.Errorf("%d segments: views of %v bytes (headers first), %d bytes held; want %d chunks", tc.segs, sizes, held, tc.chunks)
		}
	}
}

// TestCoalesceKeepsChunkForConnection: the chunk a run ended in takes the
// same connection's next run, after the bytes the stack was given, which
// stay as they were while the stack reads them (run with -race: the
// stack's reader and the coalescer share the chunk); another connection's
// segment ends that, and starts its own chunks from the first size.
func TestCoalesceKeepsChunkForConnection(t *testing.T) {
	var c coalescer
	seq := map[uint16]uint32{}
	run := func(port uint16, n, size int, fill byte) buffer.Buffer {
		t.Helper()
		for range n {
			f := seg{seq: seq[port], srcPort: port, payload: payload(size, fill)}.frame()
			seq[port] += uint32(size)
			s, ok := mergeable(f, tcpip.LinkAddress(coMAC[:]))
			if !ok || !c.addCopy(f, s) {
				t.Fatal("not merged")
			}
		}
		return c.merged()
	}
	// payloads returns where each of buf's payload views starts and ends.
	payloads := func(buf buffer.Buffer) (first, end *byte, flat []byte) {
		var views [][]byte
		buf.SubApply(0, int(buf.Size()), func(v *buffer.View) { views = append(views, v.AsSlice()) })
		flat = buf.Flatten()[len(views[0]):]
		first = &views[1][0]
		last := views[len(views)-1]
		return first, (*byte)(unsafe.Add(unsafe.Pointer(&last[0]), len(last))), flat
	}

	a1 := run(40000, 2, 1448, 'a') // 2 KiB, then 4 KiB: room left in the second
	_, end1, _ := payloads(a1)
	done := make(chan error)
	go func() { // the stack reading a1 while the coalescer fills on
		for range 200 {
			if f := a1.Flatten(); !bytes.Equal(f[len(f)-2*1448:], payload(2*1448, 'a')) {
				done <- fmt.Errorf("the stack's bytes changed under it")
				return
			}
		}
		done <- nil
	}()
	a2 := run(40000, 1, 1448, 'b')
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, _, flat1 := payloads(a1); !bytes.Equal(flat1, payload(2*1448, 'a')) {
		t.Fatal("the next run overwrote the bytes the stack was given")
	}
	first2, _, flat2 := payloads(a2)
	if first2 != end1 {
		t.Errorf("the next run of the connection starts at %p, not after the last (%p)", first2, end1)
	}
	if !bytes.Equal(flat2, payload(1448, 'b')) {
		t.Error("the next run's payload is wrong")
	}

	b := run(40001, 1, 600, 'c') // another connection; it would fit
	firstB, _, _ := payloads(b)
	_, end2, _ := payloads(a2)
	if firstB == end2 {
		t.Error("another connection's payload went into the kept chunk")
	}
	var caps []int
	b.SubApply(0, int(b.Size()), func(v *buffer.View) { caps = append(caps, v.Capacity()) })
	if caps[1] > firstChunk {
		t.Errorf("another connection's first chunk holds %d bytes, want %d", caps[1], firstChunk)
	}
	a3 := run(40000, 1, 1448, 'd') // the first connection again: its chunk was let go
	first3, _, _ := payloads(a3)
	if first3 == end2 {
		t.Error("the connection's chunk was kept across another connection's segment")
	}
	for _, buf := range []buffer.Buffer{a1, a2, b, a3} {
		buf.Release()
	}
}

// TestSameHeaderWords: for a word-aligned frame, continues' word compare
// agrees with alike on every one-byte change of a segment's headers that
// mergeable lets through, and tells the changes apart: the fields a
// run's segments may differ in are ignored, all others refuse.
func TestSameHeaderWords(t *testing.T) {
	ts := []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2} // NOP, NOP, timestamps
	for _, opts := range [][]byte{nil, ts} {
		first := seg{seq: 1000, payload: payload(1000, 1), opts: opts}.frame()
		var c coalescer
		s0, ok := mergeable(first, tcpip.LinkAddress(coMAC[:]))
		if !ok || !c.addCopy(first, s0) {
			t.Fatal("first segment not merged")
		}
		next := seg{seq: 2000, payload: payload(1000, 2), opts: opts}.frame()
		mem := make([]byte, len(next)+4)
		off := 2 - int(uintptr(unsafe.Pointer(&mem[0]))&3) // frame at 2 mod 4: its IPv4 header aligned
		if off < 0 {
			off += 4
		}
		b := mem[off : off+len(next)]
		hl := tcpOff + s0.thl
		differ, same := 0, 0
		for i := ipOff; i < hl; i++ {
			for _, x := range []byte{0x01, 0x40, 0x80} {
				copy(b, next)
				b[i] ^= x
				if ip := header.IPv4(b[ipOff:tcpOff]); i < ipOff+10 || i >= ipOff+12 {
					ip.SetChecksum(0) // mergeable checks it; the change is what is tested
					ip.SetChecksum(^ip.CalculateChecksum())
				}
				s, ok := mergeable(b, tcpip.LinkAddress(coMAC[:]))
				if !ok || s.seq != c.next || s.thl != s0.thl {
					continue
				}
				fast, slow := c.sameHeaderWords(b), c.alike(b, s, true)
				if fast != slow {
					t.Fatalf("options %x, byte %d ^ %#02x: word compare says %v, alike %v", opts, i, x, fast, slow)
				}
				if fast {
					same++
				} else {
					differ++
				}
			}
		}
		if differ == 0 || same == 0 {
			t.Fatalf("options %x: %d changes refused, %d allowed: the test exercises nothing", opts, differ, same)
		}
		t.Logf("options %x: %d changes refused, %d allowed", opts, differ, same)
	}
}

// BenchmarkContinues: continues' word compare against alike, for a
// word-aligned frame that continues the held run (both return true:
// every field compared).
func BenchmarkContinues(b *testing.B) {
	first := seg{seq: 1000, payload: payload(1448, 1)}.frame()
	var c coalescer
	s0, ok := mergeable(first, tcpip.LinkAddress(coMAC[:]))
	if !ok || !c.addCopy(first, s0) {
		b.Fatal("first segment not merged")
	}
	next := seg{seq: 1000 + 1448, payload: payload(1448, 2)}.frame()
	mem := make([]byte, len(next)+4)
	off := (6 - int(uintptr(unsafe.Pointer(&mem[0]))&3)) & 3 // the frame at 2 mod 4
	f := mem[off : off+len(next)]
	copy(f, next)
	s, _ := mergeable(f, tcpip.LinkAddress(coMAC[:]))
	b.Run("words", func(b *testing.B) {
		for range b.N {
			if !c.sameHeaderWords(f) {
				b.Fatal("does not continue")
			}
		}
	})
	b.Run("alike", func(b *testing.B) {
		for range b.N {
			if !c.alike(f, s, true) {
				b.Fatal("does not continue")
			}
		}
	})
}

// TestCoalesceAllocs: merging allocates nothing of its own per segment
// (the merged packet's header buffer comes from gVisor's pool).
func TestCoalesceAllocs(t *testing.T) {
	e, _ := coalescingEndpoint(t)
	e.Attach(nopDispatcher{})
	f := seg{seq: 100, payload: payload(1000, 1)}.frame()
	e.ReceivePassOpen()
	seq := uint32(100)
	a := testing.AllocsPerRun(1000, func() {
		binary.BigEndian.PutUint32(f[38:], seq)
		seq += 1000
		v := buffer.NewViewWithData(f)
		s, ok := mergeable(f, tcpip.LinkAddress(coMAC[:]))
		if !ok {
			t.Fatal("not mergeable")
		}
		if e.held.n == maxCoalesce {
			m := e.held.merged()
			m.Release()
		}
		p, _ := verify(f, s) // the checksum is stale: only the cost counts here
		e.held.add(v, s, p)
	})
	e.ReceivePassDone()
	if a > 1 { // the view the test itself makes
		t.Fatalf("%v allocations per segment", a)
	}
	// Borrowed frames: the payload copied into the coalescer's chunks,
	// which come from gVisor's pool.
	var frames [][]byte
	for i := range 1001 { // AllocsPerRun's runs and its warm-up
		frames = append(frames, seg{seq: seq + uint32(1000*i), payload: payload(1000, 1)}.frame())
	}
	e.ReceivePassOpen()
	a = testing.AllocsPerRun(1000, func() {
		e.Receive(frames[0])
		frames = frames[1:]
	})
	e.ReceivePassDone()
	if a >= 0.1 {
		t.Fatalf("%v allocations per borrowed segment", a)
	}
}

type nopDispatcher struct{}

func (nopDispatcher) DeliverNetworkPacket(tcpip.NetworkProtocolNumber, *stack.PacketBuffer) {}
func (nopDispatcher) DeliverLinkPacket(tcpip.NetworkProtocolNumber, *stack.PacketBuffer)    {}

// FuzzCoalesce feeds a pass arbitrary frames around valid segments: the
// Endpoint must not panic, and every packet it merged must carry valid IP
// and TCP checksums when its segments did.
func FuzzCoalesce(f *testing.F) {
	f.Add(seg{seq: 1, payload: payload(100, 1)}.frame(), seg{seq: 101, payload: payload(33, 2)}.frame(), uint8(0), uint8(0))
	f.Add(seg{seq: 1, payload: payload(1, 1)}.frame(), seg{seq: 2, payload: payload(2, 2), opts: []byte{1, 1, 1, 1}}.frame(), uint8(14), uint8(0x45))
	f.Add(seg{seq: 1, ack: 100}.frame(), seg{seq: 1, ack: 200}.frame(), uint8(48), uint8(0x10))
	f.Fuzz(func(t *testing.T, a, b []byte, at, val uint8) {
		if len(a) > gnet.RxBufSize || len(b) > gnet.RxBufSize {
			return
		}
		e, r := coalescingEndpoint(t)
		b = append([]byte{}, b...)
		if int(at) < len(b) {
			b[at] = val
		}
		// b borrowed or by reference, as val's low bit says.
		e.ReceivePassOpen()
		deliveries["view"](e, a)
		deliveries[[]string{"view", "lent"}[val&1]](e, b)
		deliveries["lent"](e, a)
		e.ReceivePassDone()
		// What the Endpoint vouched for, the stack will not check:
		// it must be right.
		for i, p := range r.pkts {
			if !r.verified[i] {
				continue
			}
			// A frame delivered as it came may carry Ethernet padding
			// after the IP packet.
			ip := header.IPv4(p)
			if len(p) < header.IPv4MinimumSize || int(ip.TotalLength()) > len(p) {
				t.Fatalf("packet %d vouched for, but its IP total length is %d of %d bytes", i, ip.TotalLength(), len(p))
			}
			ip = ip[:ip.TotalLength()]
			if refSum(ip[:header.IPv4MinimumSize]) != 0xffff || refSum(tcpPseudo(ip), ip[header.IPv4MinimumSize:]) != 0xffff {
				t.Fatalf("packet %d vouched for, but a checksum is wrong", i)
			}
		}
		if e.Stats.RxCoalesced.Load() == 0 {
			return
		}
		// The first packet is a merged one, a ++ b, or a frame as it
		// came.
		p := r.pkts[0]
		if len(a) > header.EthernetMinimumSize && bytes.Equal(p, a[header.EthernetMinimumSize:]) ||
			len(b) > header.EthernetMinimumSize && bytes.Equal(p, b[header.EthernetMinimumSize:]) {
			return // a frame delivered as it came (a thinned run's last ACK)
		}
		ip := header.IPv4(p)
		if int(ip.TotalLength()) != len(p) || refSum(ip[:header.IPv4MinimumSize]) != 0xffff {
			t.Fatalf("merged packet: total length %d of %d bytes, or a bad header checksum", ip.TotalLength(), len(p))
		}
		tcp := header.TCP(p[header.IPv4MinimumSize:])
		if validTCP(a) && validTCP(b) && refSum(tcpPseudo(ip), tcp) != 0xffff {
			t.Fatal("merged valid segments into a packet with a bad TCP checksum")
		}
	})
}

// validTCP reports whether the IPv4 TCP frame f's TCP checksum is right.
func validTCP(f []byte) bool {
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	tot := int(ip.TotalLength())
	if tot > len(ip) || tot < header.IPv4MinimumSize {
		return false
	}
	ip = ip[:tot]
	return refSum(tcpPseudo(ip), ip[ip.HeaderLength():]) == 0xffff
}

// TestCoalesceThinsAcks: a pass's run of pure ACKs of a connection, each
// acknowledging more, reaches the stack as its last one, unchanged;
// duplicate ACKs, ACKs that go back, ACKs with SACK blocks and anything
// between them are all delivered, in order.
func TestCoalesceThinsAcks(t *testing.T) {
	sack := func(l, r uint32) []byte {
		o := []byte{1, 1, 5, 10, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(o[4:], l)
		binary.BigEndian.PutUint32(o[8:], r)
		return o
	}
	type ackSeg struct {
		ack uint32
		win uint16
		opt []byte
		pay int
	}
	for _, tc := range []struct {
		name string
		in   []ackSeg
		want []int // indices of the frames the stack gets
	}{
		{"advancing", []ackSeg{{ack: 1000}, {ack: 2000}, {ack: 3000}}, []int{2}},
		{"window update", []ackSeg{{ack: 1000}, {ack: 2000, win: 9000}}, []int{1}},
		{"duplicates", []ackSeg{{ack: 1000}, {ack: 1000}, {ack: 1000}}, []int{0, 1, 2}},
		{"backwards", []ackSeg{{ack: 2000}, {ack: 1000}}, []int{0, 1}},
		{"SACK", []ackSeg{{ack: 1000}, {ack: 1000, opt: sack(3000, 4000)}, {ack: 1000, opt: sack(3000, 5000)}}, []int{0, 1, 2}},
		{"data between", []ackSeg{{ack: 1000}, {ack: 1000, pay: 100}, {ack: 2000}, {ack: 3000}}, []int{0, 1, 3}},
	} {
		for by, deliver := range deliveries {
			t.Run(tc.name+"/"+by, func(t *testing.T) {
				e, r := coalescingEndpoint(t)
				var frames [][]byte
				for _, a := range tc.in {
					s := seg{seq: 500, ack: a.ack, win: a.win, opts: a.opt, payload: payload(a.pay, 9)}
					frames = append(frames, s.frame())
				}
				inPassBy(e, deliver, frames...)
				if len(r.pkts) != len(tc.want) {
					t.Fatalf("%d packets, want %d", len(r.pkts), len(tc.want))
				}
				for i, k := range tc.want {
					if !bytes.Equal(r.pkts[i], frames[k][header.EthernetMinimumSize:]) {
						t.Fatalf("packet %d is not frame %d unchanged", i, k)
					}
				}
				if got := e.Stats.RxFrames.Load(); got != uint64(len(frames)) {
					t.Fatalf("RxFrames %d, want %d", got, len(frames))
				}
			})
		}
	}
	// Outside a pass nothing is held.
	e, r := coalescingEndpoint(t)
	for _, a := range []uint32{1000, 2000} {
		e.ReceiveView(buffer.NewViewWithData(seg{seq: 500, ack: a}.frame()))
	}
	if len(r.pkts) != 2 {
		t.Fatalf("outside a pass: %d packets", len(r.pkts))
	}
}

// TestCoalescerHeaderAlignment: the held headers' IPv4 header starts on a
// word, as a frame placed 2 bytes into a word-aligned buffer does, so that
// alike compares their fields a word at a time.
func TestCoalescerHeaderAlignment(t *testing.T) {
	var c coalescer
	if p := uintptr(unsafe.Pointer(&c.hdr[ipOff])); p%4 != 0 {
		t.Fatalf("held IPv4 header at %#x", p)
	}
}

// TestSameWords: sameWords agrees with bytes.Equal on header-sized runs at
// every alignment.
func TestSameWords(t *testing.T) {
	mem := make([]byte, 64)
	for i := range mem {
		mem[i] = byte(i)
	}
	other := append([]byte{}, mem...)
	for _, n := range []int{0, 4, 8, 12, 40} {
		for ao := 0; ao < 4; ao++ {
			for bo := 0; bo < 4; bo++ {
				a, b := mem[ao:ao+n], other[bo:bo+n]
				copy(b, a)
				if !sameWords(a, b) {
					t.Fatalf("n %d offsets %d/%d: equal runs differ", n, ao, bo)
				}
				if n > 0 {
					b[n-1] ^= 1
					if sameWords(a, b) {
						t.Fatalf("n %d offsets %d/%d: different runs alike", n, ao, bo)
					}
					b[n-1] ^= 1
				}
			}
		}
	}
}

// TestChunkRefsLayout: the pinned gVisor lays out View and its chunk as
// chunkrefs.go reads them (if an upgrade changes that, the coalescer
// silently stops reusing chunks: this fails instead), and chunkAlone
// follows the references as views are cloned and released.
func TestChunkRefsLayout(t *testing.T) {
	if !refsOK {
		t.Fatal("gVisor's View or chunk layout is not the one chunkrefs.go reads")
	}
	v := buffer.NewView(lastChunk)
	if !chunkAlone(v) {
		t.Fatal("a new view's chunk is not alone")
	}
	c1, c2 := v.Clone(), v.Clone()
	if chunkAlone(v) || chunkAlone(c1) {
		t.Fatal("a cloned view's chunk is alone")
	}
	c1.Release()
	if chunkAlone(v) {
		t.Fatal("alone with one clone left")
	}
	c2.Release()
	if !chunkAlone(v) {
		t.Fatal("not alone once every clone is released")
	}
	v.Release()
}

// bulkRuns merges runs of 20 full segments of one connection, as a bulk
// upload's passes bring them, and hands each merged packet to take.
func bulkRuns(t *testing.T, c *coalescer, runs int, take func(buffer.Buffer, []byte)) {
	t.Helper()
	seq := uint32(0)
	for r := range runs {
		var want []byte
		for i := range 20 {
			p := payload(1448, byte(r*20+i))
			want = append(want, p...)
			f := seg{seq: seq, payload: p}.frame()
			seq += 1448
			s, ok := mergeable(f, tcpip.LinkAddress(coMAC[:]))
			if !ok || !c.addCopy(f, s) {
				t.Fatal("not merged")
			}
		}
		take(c.merged(), want)
		c.passDone()
	}
}

// TestCoalescerReusesChunks: with the stack releasing each packet before
// the next pass, as a reader that keeps up makes it, the coalescer writes
// its filled 64 KiB chunks again rather than have gVisor make (and clear)
// new ones; every packet still carries its own bytes.
func TestCoalescerReusesChunks(t *testing.T) {
	var st Stats
	c := coalescer{stats: &st}
	bulkRuns(t, &c, 100, func(buf buffer.Buffer, want []byte) {
		if got := buf.Flatten()[header.IPv4MinimumSize+header.TCPMinimumSize+header.EthernetMinimumSize:]; !bytes.Equal(got, want) {
			t.Fatal("a packet's payload is wrong")
		}
		buf.Release()
	})
	// 100 runs of 28960 bytes fill 44 chunks of 64 KiB; the first ones
	// (2, 4, ... 32 KiB) come before them.
	made, reused := st.RxChunks.Load(), st.RxChunksReused.Load()
	if reused < 40 || made > 8 {
		t.Errorf("%d chunks made, %d reused; want at most 8 made, most reused", made, reused)
	}
}

// TestCoalescerReusesOnlyReleasedChunks is the wrong way caught: while
// the stack holds its packets (a reader that does not read), no chunk is
// written again, and every byte the stack was given stays as it was.
func TestCoalescerReusesOnlyReleasedChunks(t *testing.T) {
	var st Stats
	c := coalescer{stats: &st}
	var held []buffer.Buffer
	var wants [][]byte
	bulkRuns(t, &c, 20, func(buf buffer.Buffer, want []byte) {
		held, wants = append(held, buf), append(wants, want)
	})
	if n := st.RxChunksReused.Load(); n != 0 {
		t.Errorf("%d chunks the stack still held were reused", n)
	}
	for i, buf := range held {
		if got := buf.Flatten()[header.IPv4MinimumSize+header.TCPMinimumSize+header.EthernetMinimumSize:]; !bytes.Equal(got, wants[i]) {
			t.Fatalf("packet %d's payload changed under the stack", i)
		}
		buf.Release()
	}
}

// TestCoalescerLetsChunksGo: once passes stop bringing payloads, the kept
// and spare chunks are released, not held for good.
func TestCoalescerLetsChunksGo(t *testing.T) {
	c := coalescer{}
	bulkRuns(t, &c, 10, func(buf buffer.Buffer, _ []byte) { buf.Release() })
	if c.nspare == 0 || c.kept == nil {
		t.Fatalf("after a transfer: %d spares, kept %v; want some held", c.nspare, c.kept != nil)
	}
	for range idlePasses - 1 {
		c.passDone()
	}
	if c.nspare == 0 || c.kept == nil {
		t.Fatal("chunks let go before idlePasses passes")
	}
	c.passDone()
	if c.nspare != 0 || c.kept != nil {
		t.Errorf("after %d idle passes: %d spares, kept %v; want none", idlePasses, c.nspare, c.kept != nil)
	}
}

// TestCoalescerReusesChunksConcurrently: the stack reads and releases its
// packets on another goroutine, as gVisor's reader does; run with -race,
// a chunk written again before the reader's release happened would be a
// reported race, or a payload that changed under the reader. The channel
// has room for every packet, so nothing but the chunks' reference counts
// orders the reader's release before the coalescer's next write.
func TestCoalescerReusesChunksConcurrently(t *testing.T) {
	const runs = 100
	var st Stats
	c := coalescer{stats: &st}
	type pkt struct {
		buf  buffer.Buffer
		want []byte
	}
	ch := make(chan pkt, runs)
	done := make(chan error)
	go func() {
		var err error
		for p := range ch {
			if got := p.buf.Flatten()[header.IPv4MinimumSize+header.TCPMinimumSize+header.EthernetMinimumSize:]; err == nil && !bytes.Equal(got, p.want) {
				err = fmt.Errorf("a packet's payload changed under the reader")
			}
			p.buf.Release()
		}
		done <- err
	}()
	bulkRuns(t, &c, runs, func(buf buffer.Buffer, want []byte) { ch <- pkt{buf, want} })
	close(ch)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d chunks made, %d reused", st.RxChunks.Load(), st.RxChunksReused.Load())
}
