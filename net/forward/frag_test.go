package forward

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// fragmentFrame splits the IPv4 packet of an Ethernet frame into
// fragments of at most mtu bytes (RFC 791 section 3.2: data in multiples
// of 8 bytes, MF on all but the last, offsets in 8-byte units), each in
// a frame with the same Ethernet header and its own IP header checksum.
func fragmentFrame(f []byte, mtu int, id uint16) [][]byte {
	eth, ip := f[:14], f[14:]
	data := ip[20:binary.BigEndian.Uint16(ip[2:])]
	per := (mtu - 20) &^ 7
	var out [][]byte
	for off := 0; off < len(data); off += per {
		n := min(per, len(data)-off)
		g := make([]byte, 14+20+n)
		copy(g, eth)
		h := g[14:]
		copy(h, ip[:20])
		copy(h[20:], data[off:off+n])
		binary.BigEndian.PutUint16(h[2:], uint16(20+n))
		binary.BigEndian.PutUint16(h[4:], id)
		fo := uint16(off / 8)
		if off+n < len(data) {
			fo |= 0x2000
		}
		binary.BigEndian.PutUint16(h[6:], fo)
		h[10], h[11] = 0, 0
		binary.BigEndian.PutUint16(h[10:], checksum(h[:20], 0))
		out = append(out, g)
	}
	return out
}

// joinFrames reassembles fragments sent in order into one frame.
func joinFrames(t *testing.T, frags [][]byte) []byte {
	t.Helper()
	f := append([]byte(nil), frags[0][:14+20]...)
	for i, g := range frags {
		ip := g[14:]
		if checksum(ip[:20], 0) != 0 {
			t.Fatalf("fragment %d: IP header checksum wrong", i)
		}
		if string(ip[12:20]) != string(f[14+12:14+20]) || int(binary.BigEndian.Uint16(ip[6:])&0x1fff)*8 != len(f)-34 {
			t.Fatalf("fragment %d does not follow: % x", i, ip[:20])
		}
		f = append(f, ip[20:binary.BigEndian.Uint16(ip[2:])]...)
	}
	binary.BigEndian.PutUint16(f[14+2:], uint16(len(f)-14))
	binary.BigEndian.PutUint16(f[14+6:], 0)
	f[14+10], f[14+11] = 0, 0
	binary.BigEndian.PutUint16(f[14+10:], checksum(f[14:34], 0))
	return f
}

// TestFragmentsForwarded: a 3000-byte UDP datagram in 3 fragments leaves
// the WAN masqueraded, the answer in 3 fragments reaches the LAN host;
// the fragments after the first take the fast path with the connection's
// next hop, and both datagrams reassemble with valid checksums.
func TestFragmentsForwarded(t *testing.T) {
	g := newRig(t)
	out := netip.AddrPortFrom(host, 5000)
	to := netip.AddrPortFrom(remote, 53)
	fast := g.f.Stats.FastPath.Load()
	for _, fr := range fragmentFrame(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(2992)), 1500, 0x77) {
		g.lan.Receive(fr)
	}
	g.wanNIC.mu.Lock()
	sent := g.wanNIC.sent
	g.wanNIC.sent = nil
	g.wanNIC.mu.Unlock()
	if len(sent) != 3 {
		t.Fatalf("%d of 3 fragments sent", len(sent))
	}
	for _, f := range sent {
		if [6]byte(f[0:6]) != gwMAC || [6]byte(f[6:12]) != wanMAC || f[14+8] != 63 {
			t.Fatalf("L2/TTL: dst %x src %x ttl %d", f[0:6], f[6:12], f[14+8])
		}
	}
	if n := g.f.Stats.FastPath.Load() - fast; n != 2 {
		t.Fatalf("%d of the 2 later fragments took the fast path", n)
	}
	whole := joinFrames(t, sent)
	verify(t, whole)
	src, dst := addrs(whole)
	if src.Addr() != wanAddr.Addr() || dst != to {
		t.Fatalf("sent %v → %v", src, dst)
	}

	for _, fr := range fragmentFrame(frame(wanMAC, gwMAC, to, src, protoUDP, 60, udp(2992)), 1500, 0x99) {
		g.wan.Receive(fr)
	}
	g.lanNIC.mu.Lock()
	back := g.lanNIC.sent
	g.lanNIC.sent = nil
	g.lanNIC.mu.Unlock()
	if len(back) != 3 {
		t.Fatalf("%d of 3 answer fragments reached the LAN", len(back))
	}
	whole = joinFrames(t, back)
	verify(t, whole)
	if rs, rd := addrs(whole); rs != to || rd != out || [6]byte(whole[0:6]) != hostMAC {
		t.Fatalf("answer %v → %v to %x", rs, rd, whole[0:6])
	}
	if g.wanUp.count() != 0 {
		t.Fatal("a forwarded fragment reached the router's stack")
	}
}
