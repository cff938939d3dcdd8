package ethudp

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"
)

// The test's own encoder, written independently of buildFrame: headers
// laid out field by field from RFC 791/768, checksums by a 64-bit sum.

func onesSum(data ...[]byte) uint16 {
	var all []byte
	for _, d := range data {
		all = append(all, d...)
	}
	if len(all)%2 == 1 {
		all = append(all, 0)
	}
	var s uint64
	for i := 0; i < len(all); i += 2 {
		s += uint64(all[i])<<8 | uint64(all[i+1])
	}
	for s > 0xffff {
		s = (s >> 16) + (s & 0xffff)
	}
	return ^uint16(s)
}

type testFrame struct {
	dstMAC, srcMAC [6]byte
	src, dst       [4]byte
	sport, dport   uint16
	payload        []byte
	noUDPSum       bool
	pad            int // Ethernet padding after the packet
}

func (f testFrame) bytes() []byte {
	udpLen := 8 + len(f.payload)
	udp := []byte{byte(f.sport >> 8), byte(f.sport), byte(f.dport >> 8), byte(f.dport), byte(udpLen >> 8), byte(udpLen), 0, 0}
	udp = append(udp, f.payload...)
	if !f.noUDPSum {
		pseudo := append(append(append([]byte{}, f.src[:]...), f.dst[:]...), 0, 17, byte(udpLen>>8), byte(udpLen))
		c := onesSum(pseudo, udp)
		if c == 0 {
			c = 0xffff
		}
		udp[6], udp[7] = byte(c>>8), byte(c)
	}
	total := 20 + udpLen
	ip := []byte{0x45, 0, byte(total >> 8), byte(total), 0x12, 0x34, 0, 0, 64, 17, 0, 0}
	ip = append(append(ip, f.src[:]...), f.dst[:]...)
	c := onesSum(ip)
	ip[10], ip[11] = byte(c>>8), byte(c)
	out := append(append(append([]byte{}, f.dstMAC[:]...), f.srcMAC[:]...), 0x08, 0x00)
	out = append(append(out, ip...), udp...)
	return append(out, make([]byte, f.pad)...)
}

var (
	myMAC     = [6]byte{0x02, 0, 0, 0, 0, 0x68}
	serverMAC = [6]byte{0x02, 0, 0, 0, 0, 0x67}
	serverIP  = [4]byte{10, 0, 0, 1}
)

func offer(payload []byte) testFrame {
	return testFrame{dstMAC: broadcastMAC, srcMAC: serverMAC, src: serverIP, dst: [4]byte{255, 255, 255, 255}, sport: 67, dport: 68, payload: payload}
}

type sink struct {
	mu     sync.Mutex
	frames [][]byte
}

func (s *sink) send(f []byte) error {
	s.mu.Lock()
	s.frames = append(s.frames, append([]byte(nil), f...))
	s.mu.Unlock()
	return nil
}

func newConn(t testing.TB) (*Conn, *sink) {
	s := &sink{}
	return New(Config{MAC: myMAC, Port: 68, Send: s.send}), s
}

// A published vector: the IPv4 header checksum example
// 4500 0073 0000 4000 4011 xxxx c0a8 0001 c0a8 00c7 has checksum b861.
func TestChecksumVector(t *testing.T) {
	h := []byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7}
	if got := checksum(h, 0); got != 0xb861 {
		t.Fatalf("checksum = %#04x, want 0xb861", got)
	}
	h[10], h[11] = 0xb8, 0x61
	if got := checksum(h, 0); got != 0 {
		t.Fatalf("checksum over a correct header = %#04x, want 0", got)
	}
	// Odd length: the last byte is padded with zero (RFC 1071).
	if a, b := checksum([]byte{1, 2, 3}, 0), onesSum([]byte{1, 2, 3}); a != b {
		t.Fatalf("odd length: %#x vs %#x", a, b)
	}
}

func TestDeliverAndRead(t *testing.T) {
	c, _ := newConn(t)
	payload := []byte("hello dhcp, odd length!")
	for _, pad := range []int{0, 7} {
		f := offer(payload)
		f.pad = pad
		if !c.Deliver(f.bytes()) {
			t.Fatalf("valid frame (pad %d) refused: %+v", pad, c.Stats())
		}
		buf := make([]byte, 1500)
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[:n], payload) {
			t.Fatalf("payload %q", buf[:n])
		}
		if ua := from.(*net.UDPAddr); ua.String() != "10.0.0.1:67" {
			t.Fatalf("from %v", ua)
		}
	}
	// No UDP checksum is allowed (RFC 768).
	f := offer(payload)
	f.noUDPSum = true
	if !c.Deliver(f.bytes()) {
		t.Fatal("frame without UDP checksum refused")
	}
	// Unicast to our MAC and any address while unbound.
	f = offer(payload)
	f.dstMAC, f.dst = myMAC, [4]byte{10, 0, 0, 77}
	if !c.Deliver(f.bytes()) {
		t.Fatal("unicast offer to the offered address refused while unbound")
	}
	if s := c.Stats(); s.Received != 4 || s.Malformed != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestDeliverRejects(t *testing.T) {
	good := offer([]byte("payload")).bytes()
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name      string
		frame     []byte
		malformed bool
	}{
		{"short", good[:20], true},
		{"ip header checksum", mut(func(b []byte) []byte { b[14+10] ^= 1; return b }), true},
		{"udp checksum", mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), true},
		{"ip total length beyond frame", mut(func(b []byte) []byte { b = b[:len(b)-1]; return b }), true},
		{"udp length beyond ip", mut(func(b []byte) []byte { b[14+20+5] += 4; return b }), true},
		{"version 6", mut(func(b []byte) []byte { b[14] = 0x65; return b }), true},
		{"fragment", mut(func(b []byte) []byte {
			b[14+6] = 0x20 // MF
			b[14+10], b[14+11] = 0, 0
			c := onesSum(b[14:34])
			b[14+10], b[14+11] = byte(c>>8), byte(c)
			return b
		}), true},
		{"other mac", mut(func(b []byte) []byte { b[0] = 0x02; return b }), false},
		{"arp", mut(func(b []byte) []byte { b[13] = 0x06; return b }), false},
	}
	for _, tc := range cases {
		c, _ := newConn(t)
		if c.Deliver(tc.frame) {
			t.Errorf("%s: accepted", tc.name)
		}
		s := c.Stats()
		if tc.malformed && s.Malformed != 1 || !tc.malformed && s.NotForUs != 1 {
			t.Errorf("%s: stats %+v", tc.name, s)
		}
	}
	// Other port (checksums redone by the encoder).
	c, _ := newConn(t)
	f := offer([]byte("x"))
	f.dport = 69
	if c.Deliver(f.bytes()) || c.Stats().NotForUs != 1 {
		t.Error("other port accepted")
	}
	// Bound: other unicast addresses are not for us.
	c.SetAddr(netip.MustParseAddr("10.0.0.50"))
	f = offer([]byte("x"))
	f.dstMAC, f.dst = myMAC, [4]byte{10, 0, 0, 77}
	if c.Deliver(f.bytes()) {
		t.Error("datagram for another address accepted while bound")
	}
	f.dst = [4]byte{10, 0, 0, 50}
	if !c.Deliver(f.bytes()) {
		t.Error("datagram for our address refused")
	}
}

func TestWriteTo(t *testing.T) {
	c, s := newConn(t)
	payload := []byte("a DHCPDISCOVER, say")
	if _, err := c.WriteTo(payload, &net.UDPAddr{IP: net.IPv4bcast, Port: 67}); err != nil {
		t.Fatal(err)
	}
	want := testFrame{dstMAC: broadcastMAC, srcMAC: myMAC, dst: [4]byte{255, 255, 255, 255}, sport: 68, dport: 67, payload: payload}.bytes()
	// The encoder's identification is 0x1234; ours is 0 with DF: patch
	// those fields and recompute the header checksum before comparing.
	want[14+4], want[14+5], want[14+6] = 0, 0, 0x40
	want[14+10], want[14+11] = 0, 0
	cs := onesSum(want[14:34])
	want[14+10], want[14+11] = byte(cs>>8), byte(cs)
	if !bytes.Equal(s.frames[0], want) {
		t.Fatalf("frame\n got %x\nwant %x", s.frames[0], want)
	}

	// After hearing from the server, unicast goes to its MAC, from our address.
	c.Deliver(offer([]byte("offer")).bytes())
	c.SetAddr(netip.MustParseAddr("10.0.0.50"))
	if _, err := c.WriteTo(payload, &net.UDPAddr{IP: net.IP(serverIP[:]), Port: 67}); err != nil {
		t.Fatal(err)
	}
	f := s.frames[1]
	if !bytes.Equal(f[0:6], serverMAC[:]) || !bytes.Equal(f[14+12:14+16], []byte{10, 0, 0, 50}) {
		t.Fatalf("unicast frame %x", f[:34])
	}
	// What we send, we accept: checksums verify.
	r := New(Config{MAC: serverMAC, Port: 67, Send: s.send})
	if !r.Deliver(f) {
		t.Fatalf("own frame fails validation: %+v", r.Stats())
	}
	// Unknown unicast address: broadcast MAC.
	c.WriteTo(payload, &net.UDPAddr{IP: net.IPv4(10, 9, 9, 9), Port: 67})
	if !bytes.Equal(s.frames[2][0:6], broadcastMAC[:]) {
		t.Fatal("unknown peer not broadcast")
	}
	if _, err := c.WriteTo(make([]byte, 1500), &net.UDPAddr{IP: net.IPv4bcast, Port: 67}); !errors.Is(err, errTooBig) {
		t.Fatalf("oversize: %v", err)
	}
	if _, err := c.WriteTo(payload, &net.IPAddr{IP: net.IPv4bcast}); err == nil {
		t.Fatal("non-UDP address accepted")
	}
}

func TestQueueBoundAndDeadlines(t *testing.T) {
	c, _ := newConn(t)
	fr := offer([]byte("x")).bytes()
	for i := 0; i < DefaultQueueLen+3; i++ {
		c.Deliver(fr)
	}
	if s := c.Stats(); s.Received != DefaultQueueLen || s.QueueFull != 3 {
		t.Fatalf("stats %+v", s)
	}
	buf := make([]byte, 100)
	for i := 0; i < DefaultQueueLen; i++ {
		if _, _, err := c.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	start := time.Now()
	if _, _, err := c.ReadFrom(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) < 25*time.Millisecond {
		t.Fatal("deadline fired early")
	}
	// A blocked reader is woken by a new deadline in the past, by a
	// delivery and by Close.
	c.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, _, err := c.ReadFrom(buf); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c.SetReadDeadline(time.Now())
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	c.SetReadDeadline(time.Time{})
	go func() { _, _, err := c.ReadFrom(buf); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c.Deliver(fr)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	go func() { _, _, err := c.ReadFrom(buf); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("err %v", err)
	}
	if _, err := c.WriteTo(buf, &net.UDPAddr{IP: net.IPv4bcast, Port: 67}); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after close: %v", err)
	}
}

func TestDeliverAllocs(t *testing.T) {
	c, _ := newConn(t)
	fr := offer(make([]byte, 300)).bytes()
	buf := make([]byte, 1500)
	allocs := testing.AllocsPerRun(1000, func() {
		c.Deliver(fr)
		c.mu.Lock() // drain without ReadFrom's net.Addr allocation
		c.head, c.n = 0, 0
		c.mu.Unlock()
	})
	if allocs != 0 {
		t.Fatalf("Deliver allocates %v per frame", allocs)
	}
	dst := &net.UDPAddr{IP: net.IPv4bcast, Port: 67}
	allocs = testing.AllocsPerRun(1000, func() { c.WriteTo(buf[:300], dst) })
	if allocs > 0 {
		// The sink copies; measure with a non-copying Send.
		c2 := New(Config{MAC: myMAC, Port: 68, Send: func([]byte) error { return nil }})
		if a := testing.AllocsPerRun(1000, func() { c2.WriteTo(buf[:300], dst) }); a != 0 {
			t.Fatalf("WriteTo allocates %v per datagram", a)
		}
	}
}

func BenchmarkDeliver(b *testing.B) {
	c, _ := newConn(b)
	fr := offer(make([]byte, 548)).bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(fr)))
	for b.Loop() {
		c.Deliver(fr)
		c.mu.Lock()
		c.head, c.n = 0, 0
		c.mu.Unlock()
	}
}

func BenchmarkWriteTo(b *testing.B) {
	c := New(Config{MAC: myMAC, Port: 68, Send: func([]byte) error { return nil }})
	p := make([]byte, 548)
	dst := &net.UDPAddr{IP: net.IPv4bcast, Port: 67}
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		c.WriteTo(p, dst)
	}
}

func FuzzDeliver(f *testing.F) {
	f.Add(offer([]byte("seed")).bytes())
	f.Add(offer(nil).bytes())
	g := offer([]byte("pad"))
	g.pad = 10
	f.Add(g.bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		c, _ := newConn(t)
		in := append([]byte(nil), frame...)
		ok := c.Deliver(frame)
		if !bytes.Equal(in, frame) {
			t.Fatal("Deliver modified the frame")
		}
		s := c.Stats()
		if s.Received+s.Malformed+s.NotForUs+s.QueueFull != 1 {
			t.Fatalf("frame not counted exactly once: %+v", s)
		}
		if !ok {
			return
		}
		// An accepted frame re-encodes to the same datagram.
		buf := make([]byte, 2000)
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		ua := from.(*net.UDPAddr)
		if int(ua.Port) != int(frame[14+int(frame[14]&15)*4])<<8|int(frame[14+int(frame[14]&15)*4+1]) {
			t.Fatalf("source port %d", ua.Port)
		}
		if n > len(frame) {
			t.Fatalf("payload %d longer than frame %d", n, len(frame))
		}
	})
}
