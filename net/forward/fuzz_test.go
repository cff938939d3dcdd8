package forward

import (
	"bytes"
	"net/netip"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
)

// FuzzReceive feeds arbitrary frames to both interfaces of a forwarder
// that already tracks a NATed flow: nothing panics, and every frame sent
// on is IPv4, with a valid header checksum if the received frame's was
// (the forwarder updates the checksum of what it forwards, so a damaged
// header stays detectably damaged, and builds what it answers).
func FuzzReceive(f *testing.F) { fuzzReceive(f, false) }

// FuzzReceiveLent is FuzzReceive with lower NICs that copy before
// Transmit returns (the lent fast path, processLent): also, the borrowed
// frame is never written to.
func FuzzReceiveLent(f *testing.F) { fuzzReceive(f, true) }

func fuzzReceive(f *testing.F, copying bool) {
	out := netip.AddrPortFrom(host, 5000)
	to := netip.AddrPortFrom(remote, 53)
	wanSide := netip.AddrPortFrom(wanAddr.Addr(), 5000)
	for _, s := range [][]byte{
		frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32)),
		frame(lanMAC, hostMAC, out, to, protoUDP, 1, udp(8)),
		frame(lanMAC, hostMAC, out, to, protoTCP, 64, tcpSYN()),
		frame(wanMAC, gwMAC, to, wanSide, protoUDP, 60, udp(100)),
		frame(wanMAC, gwMAC, to, netip.AddrPortFrom(wanAddr.Addr(), 22), protoTCP, 60, tcpSYN()),
		frame(wanMAC, gwMAC, to, netip.AddrPortFrom(wanAddr.Addr(), 0), protoICMP, 60, echoRequest(9)),
		{},
		make([]byte, 14),
	} {
		f.Add(false, s)
		f.Add(true, s)
	}
	copyingNICs = copying
	g := newRig(f)
	copyingNICs = false
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32)))
	g.lanNIC.keep, g.wanNIC.keep = true, true
	f.Fuzz(func(t *testing.T, fromWAN bool, b []byte) {
		g.lanNIC.sent, g.wanNIC.sent = nil, nil
		in := g.lan
		if fromWAN {
			in = g.wan
		}
		lent := bytes.Clone(b)
		in.Receive(lent)
		if !bytes.Equal(lent, b) {
			t.Fatal("the received frame was written to")
		}
		for _, nic := range []*sinkNIC{g.lanNIC, g.wanNIC} {
			for _, s := range nic.sent {
				if len(s) < 14+20 || s[12] != 0x08 || s[13] != 0 {
					t.Fatalf("sent a frame that is not IPv4: % x", s)
				}
				if ipValid(b) && checksum(s[14:14+int(s[14]&0x0f)*4], 0) != 0 {
					t.Fatalf("sent a frame whose IPv4 header checksum is wrong: % x", s)
				}
			}
		}
	})
}

// ipValid reports whether frame holds an IPv4 header whose checksum
// verifies.
func ipValid(frame []byte) bool {
	if len(frame) < 14+20 {
		return false
	}
	ihl := int(frame[14]&0x0f) * 4
	return ihl >= 20 && 14+ihl <= len(frame) && checksum(frame[14:14+ihl], 0) == 0
}

// FuzzReceiveLentBuf is FuzzReceiveLent with the ingress driver's buffer
// offered too (ReceiveLentBuf, br-lan's host port) and an egress NIC that
// sends kept buffers in place: frames sent on are valid IPv4, a frame
// is written only in the headers (and, if not kept, only in what
// net.RxBuf.Rewrite lent out).
func FuzzReceiveLentBuf(f *testing.F) {
	out := netip.AddrPortFrom(host, 5000)
	to := netip.AddrPortFrom(remote, 53)
	wanSide := netip.AddrPortFrom(wanAddr.Addr(), 5000)
	for _, s := range [][]byte{
		frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32)),
		frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(600)),
		frame(lanMAC, hostMAC, out, to, protoTCP, 64, tcpSYN()),
		frame(wanMAC, gwMAC, to, wanSide, protoUDP, 60, udp(700)),
		{},
		make([]byte, 14),
	} {
		f.Add(false, s)
		f.Add(true, s)
	}
	copyingNICs, rxBufNICs = true, true
	g := newRig(f)
	copyingNICs, rxBufNICs = false, false
	g.lan.Receive(frame(lanMAC, hostMAC, out, to, protoUDP, 64, udp(32)))
	g.lanNIC.keep, g.wanNIC.keep = true, true
	var rx driverRx
	f.Fuzz(func(t *testing.T, fromWAN bool, b []byte) {
		if len(b) > gnet.RxBufSize {
			return
		}
		g.lanNIC.sent, g.wanNIC.sent = nil, nil
		in := g.lan
		if fromWAN {
			in = g.wan
		}
		keeps := rx.keeps
		lent := rx.lend(b)
		in.ReceiveLentBuf(lent, &rx)
		// What the buffer holds if nothing wrote it: b, its tail still
		// poisoned if nobody asked for the whole frame.
		unwritten := b
		if rx.tail != nil {
			unwritten = append([]byte(nil), b...)
			for i := gnet.RxHeadLen; i < len(unwritten); i++ {
				unwritten[i] = poison
			}
		}
		switch {
		case rx.keeps == keeps && !bytes.Equal(lent[rx.rewritten:], unwritten[rx.rewritten:]):
			t.Fatal("a frame not kept was written beyond what Rewrite lent out")
		case rx.rewritten > 0 && rx.rewritten != rewrittenLen(b):
			t.Fatalf("Rewrite lent out %d bytes, not the %d of the headers", rx.rewritten, rewrittenLen(b))
		case rx.keeps != keeps && (len(lent) != len(b) || !bytes.Equal(lent[rewrittenLen(b):], unwritten[rewrittenLen(b):])):
			t.Fatal("a kept frame was written beyond its headers")
		}
		for _, nic := range []*sinkNIC{g.lanNIC, g.wanNIC} {
			for _, s := range nic.sent {
				if len(s) < 14+20 || s[12] != 0x08 || s[13] != 0 {
					t.Fatalf("sent a frame that is not IPv4: % x", s)
				}
				if ipValid(b) && checksum(s[14:14+int(s[14]&0x0f)*4], 0) != 0 {
					t.Fatalf("sent a frame whose IPv4 header checksum is wrong: % x", s)
				}
			}
		}
	})
}
