package forward

import (
	"encoding/binary"
	"net/netip"
	"sync"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/nat"
	"gvisor.dev/gvisor/pkg/buffer"
)

// process runs one routable frame, held in v (writable, owned), through
// the connection table and acts on the verdict. It consumes v.
func (f *Forwarder) process(in *Iface, v *buffer.View) {
	b := v.AsSlice()
	pkt := b[gnet.EthHeaderLen:]
	if !in.track {
		// A zone without tracked input (br-lan): packets for the router
		// need only the input chain, and never touch the table, which
		// holds forwarded and WAN connections.
		if p, ok := f.peekLocal(pkt); ok {
			p.In = uint8(in.id)
			if verdict(f.rules.Load().Input(&p)) != nat.Forward {
				f.Stats.InputDrop.Add(1)
				v.Release()
				return
			}
			f.Stats.Local.Add(1)
			in.deliverView(v)
			return
		}
	}
	// A packet longer than some interface's MTU may not fit its egress
	// one: keep it as received, to quote in "fragmentation needed"
	// (the sender must recognise its own packet, before NAT). With equal
	// MTUs everywhere this is one comparison per packet.
	var orig *buffer.View
	if len(pkt) >= ipv4Min && int(pkt[2])<<8|int(pkt[3]) > int(f.minMTU.Load()) {
		orig = buffer.NewViewWithData(pkt)
		defer orig.Release()
	}
	f.act(in, v, f.table.Forward(pkt, in.id), orig)
}

// act carries out the connection table's verdict on the packet in v
// (rewritten if the verdict is Forward; orig is its copy as received if
// it may be too big for its egress interface). It consumes v.
func (f *Forwarder) act(in *Iface, v *buffer.View, vd nat.Verdict, orig *buffer.View) {
	b := v.AsSlice()
	switch vd.Action {
	case nat.Forward:
		if orig != nil && f.tooBig(in, b[6:12], orig.AsSlice(), vd) {
			v.Release()
			return
		}
		f.send(v, vd)
	case nat.Local:
		f.Stats.Local.Add(1)
		in.deliverView(v)
	case nat.Reject:
		f.Stats.Rejected.Add(1)
		f.answer(in, b, vd)
		v.Release()
	default:
		if vd.Reason == nat.TTLExceeded {
			f.answer(in, b, vd)
		}
		v.Release()
	}
}

// processLent is process for a routable frame the lower NIC lends (a
// driver's receive buffer, or br-lan's ingress frame through the host
// port's LendHandler). A packet of a known connection whose egress NIC
// copies before Transmit returns (net.CapTxCopy) is copied into the
// ingress interface's own buffer, rewritten there and transmitted from
// it: one copy before the driver's, and no gVisor buffer (its pool and
// reference counts cost more than the copy). Other verdicts continue in
// a buffer of their own. A packet for the router from a zone without
// tracked input goes up borrowed (inputLent). A packet for the router
// from a tracked zone, or one longer than the smallest MTU (which may
// need the original for an ICMP error), is left alone: processLent
// returns false before it does anything, and the caller takes the
// buffered path.
func (f *Forwarder) processLent(in *Iface, frame []byte) bool {
	if len(frame) > len(in.lent) {
		return false
	}
	pkt := frame[gnet.EthHeaderLen:]
	if !in.track && len(pkt) >= ipv4Min && f.isLocal4(binary.BigEndian.Uint32(pkt[16:20])) {
		return f.inputLent(in, frame)
	}
	if len(pkt) >= ipv4Min && int(pkt[2])<<8|int(pkt[3]) > int(f.minMTU.Load()) {
		return false
	}
	// TCP and UDP are rewritten in their headers only, with incremental
	// checksum updates (nat's rewrite): copy the headers and leave the
	// payload where it is, for a NIC that gathers; the rest of b is
	// filled in only if the packet leaves the fast path.
	n := rewrittenLen(frame)
	if in.rxBuf != nil && len(frame)-n >= keepMinTail {
		if h := in.rxBuf.Rewrite(n); h != nil {
			return f.processInPlace(in, frame, n)
		}
	}
	in.readable(frame)
	b := in.lent[:len(frame)]
	copy(b, frame[:n])
	vd := f.table.Forward(b[gnet.EthHeaderLen:], in.id)
	if vd.Action == nat.Forward && vd.Conn != nil {
		out := f.iface(vd.Out)
		if out != nil && out.sendsRx && in.rxBuf != nil && len(frame)-n >= keepMinTail && f.sendKept(in, out, b[:n], vd) {
			return true
		}
		if out != nil && out.copies && (n == len(frame) || out.gathers) {
			if vd.PutHop(b) {
				if in.transmitLent(out, b[:n], frame[n:]) {
					f.countFast(in)
				}
				return true
			}
		}
	}
	copy(b[n:], frame[n:])
	f.act(in, buffer.NewViewWithData(b), vd, nil)
	return true
}

// inputLent is process's way with a packet for the router from a zone
// without tracked input, for a borrowed frame: the input chain, then up to
// the stack, borrowed, as a driver lends frames. The stack copies what it
// keeps, and of a TCP segment it can merge only the payload, into the
// merged packet's own buffer (net/netstack), which the bridge's copy of
// the whole frame into a buffer of its own would only have preceded. A
// packet peekLocal cannot judge is left to the buffered path: inputLent
// returns false.
func (f *Forwarder) inputLent(in *Iface, frame []byte) bool {
	pkt := frame[gnet.EthHeaderLen:]
	rules := f.rules.Load()
	key, keyed := inputKeyOf(pkt)
	if !keyed || !in.accepted.holds(rules, key) {
		p, ok := f.peekLocal(pkt)
		if !ok {
			return false
		}
		p.In = uint8(in.id)
		if verdict(rules.Input(&p)) != nat.Forward {
			f.Stats.InputDrop.Add(1)
			return true
		}
		if keyed {
			in.accepted = inputMemo{rules: rules, key: key}
		}
	}
	f.countLocal(in)
	in.readable(frame)
	in.deliverFrame(frame)
	return true
}

// countLocal counts a frame inputLent passed up: when the pass ends if it
// came with its driver's buffer (ReceiveLentBuf, which ReceiveLentDone
// follows), else at once.
func (f *Forwarder) countLocal(in *Iface) {
	if in.rxBuf != nil {
		in.localSent++
		return
	}
	f.Stats.Local.Add(1)
}

// inputMemo is an interface's last packet for the router that the input
// chain accepted, as inputKeyOf keys it, and the ruleset that did: a
// TCP transfer to the router, one flow, is judged once rather than per
// segment (peek and the chain cost some 1200 instructions a frame on
// mips32, a tenth of the router's whole receive path).
type inputMemo struct {
	rules *firewall.Ruleset
	key   inputKey
}

// inputKey is what of an IPv4 header without options, and the 4 bytes
// after it, peek reads: fragment offset, protocol, addresses, the
// transport's ports (or ICMP type and code, and the checksum with them).
// Equal keys make equal firewall.Packets, and a Ruleset's verdict
// depends on nothing else (it is read-only), so a memo of the same
// ruleset is exact.
type inputKey struct{ frag, addrs [2]uint32 }

// inputKeyOf returns pkt's key, if it has the form the key covers.
func inputKeyOf(pkt []byte) (inputKey, bool) {
	if len(pkt) < ipv4Min+4 || pkt[0] != 0x45 {
		return inputKey{}, false
	}
	be := binary.BigEndian
	return inputKey{
		frag:  [2]uint32{uint32(be.Uint16(pkt[6:]))&0x1fff | uint32(pkt[9])<<16, be.Uint32(pkt[20:])},
		addrs: [2]uint32{be.Uint32(pkt[12:]), be.Uint32(pkt[16:])},
	}, true
}

// holds reports whether the memo accepted key under rules.
func (m *inputMemo) holds(rules *firewall.Ruleset, key inputKey) bool {
	return m.rules == rules && m.key == key
}

// processInPlace is processLent for a frame whose first n bytes, the
// headers nat rewrites, the ingress driver lets it write in place
// (net.RxBuf.Rewrite): the connection table rewrites them in the
// driver's buffer, which is then kept and sent as it is, so the headers
// are copied neither into the interface's buffer nor back (about 160
// instructions per frame on mips32, natbench). A verdict other than a
// cached forward leaves the fast path as processLent's does, from a copy.
func (f *Forwarder) processInPlace(in *Iface, frame []byte, n int) bool {
	vd := f.table.Forward(frame[gnet.EthHeaderLen:], in.id)
	if vd.Action == nat.Forward && vd.Conn != nil {
		if out := f.iface(vd.Out); out != nil && vd.PutHop(frame) {
			if out.sendsRx {
				if t := in.rxBuf.Keep(); t != nil {
					in.rxBuf = nil
					f.transmitKept(in, out, t)
					return true
				}
			}
			if out.copies && out.gathers {
				in.readable(frame) // the NIC copies the payload
				if in.transmitLent(out, frame[:n], frame[n:]) {
					f.countFast(in)
				}
				return true
			}
		}
	}
	in.readable(frame)
	b := in.lent[:len(frame)]
	copy(b, frame)
	f.act(in, buffer.NewViewWithData(b), vd, nil)
	return true
}

// transmitKept sends t, a buffer kept from the ingress driver of in,
// out of out; it counts the frame forwarded on the fast path when the
// pass ends (in.fastSent, ReceiveLentDone).
func (f *Forwarder) transmitKept(in, out *Iface, t gnet.TxBuf) {
	if out.lower.Transmit(t) != nil {
		t.Release()
		f.Stats.TxErrors.Add(1)
		return
	}
	in.fastSent++
}

// countFast counts a frame processLent forwarded on the fast path: when
// the pass ends if the frame came with its driver's buffer
// (ReceiveLentBuf, which ReceiveLentDone follows), else at once.
func (f *Forwarder) countFast(in *Iface) {
	if in.rxBuf != nil {
		in.fastSent++
		return
	}
	f.Stats.Forwarded.Add(1)
	f.Stats.FastPath.Add(1)
}

// sendKept sends the frame processLent handles out of out from the
// ingress driver's buffer, kept with the rewritten headers head written
// over its own (net.RxBuf.KeepWith): no copy. It reports false, having
// done nothing, if the next hop is not cached or the driver cannot spare
// the buffer.
func (f *Forwarder) sendKept(in, out *Iface, head []byte, vd nat.Verdict) bool {
	if !vd.PutHop(head) {
		return false
	}
	t := in.rxBuf.KeepWith(head)
	if t == nil {
		return false
	}
	in.rxBuf = nil
	f.transmitKept(in, out, t)
	return true
}

// keepMinTail is the least payload beyond the rewritten headers for
// which the fast path keeps the driver's buffer rather than have the
// egress NIC copy the frame: keeping costs a spare buffer's round trip
// and the headers' cache writeback, which a copy of fewer bytes beats
// (natbench: a 60-byte frame cost about 190 instructions more kept).
const keepMinTail = 256

// maxHeaders bounds the headers of a TCP or UDP frame the fast path
// rewrites: Ethernet, an IPv4 header with options (60), a TCP header with
// options (60, the MSS clamp's reach).
const maxHeaders = gnet.EthHeaderLen + 60 + 60

// Transport header lengths: UDP's (RFC 768), TCP's without options
// (RFC 9293 section 3.1).
const (
	udpHeaderLen = 8
	tcpMinHeader = 20
)

// rewrittenLen returns how much of frame processLent copies before the
// connection table sees it: for TCP and UDP the headers nat's rewrite
// touches (Ethernet, the IPv4 header with its options, the TCP header
// with its options or the UDP header), else the whole frame. Copying the
// headers' real length rather than maxHeaders saves a third of a
// 134-byte copy, and the cache lines the kept buffer writes back
// (natbench). A header that claims more than the frame holds gets
// maxHeaders' worth, and the table drops it as malformed.
func rewrittenLen(frame []byte) int {
	n := len(frame)
	pkt := frame[gnet.EthHeaderLen:]
	if n <= maxHeaders || len(pkt) < ipv4Min {
		// A short frame is copied whole: one segment to transmit costs
		// less than the bytes saved (natbench: 50 instructions more for
		// a 60-byte frame sent in two).
		return n
	}
	ihl := int(pkt[0]&0x0f) * 4
	var h int
	switch pkt[9] {
	case protoUDP:
		h = gnet.EthHeaderLen + ihl + udpHeaderLen
	case protoTCP:
		if ihl+12 < len(pkt) {
			if doff := int(pkt[ihl+12]>>4) * 4; doff >= tcpMinHeader {
				h = gnet.EthHeaderLen + ihl + doff
			}
		}
	default:
		return n
	}
	if ihl < ipv4Min || h == 0 || h > n {
		// Malformed, or a later fragment shorter than a transport header
		// (fragments only have their IPv4 header rewritten).
		return min(n, maxHeaders)
	}
	return h
}

// send puts a rewritten packet on its egress interface: at once with the
// connection's cached next hop (the fast path), else after resolving it.
func (f *Forwarder) send(v *buffer.View, vd nat.Verdict) {
	out := f.iface(vd.Out)
	if out == nil || vd.Conn == nil {
		v.Release()
		return
	}
	b := v.AsSlice()
	if vd.PutHop(b) {
		if out.transmit(v) {
			f.Stats.Forwarded.Add(1)
			f.Stats.FastPath.Add(1)
		}
		return
	}
	dst := netip.AddrFrom4([4]byte(b[gnet.EthHeaderLen+16 : gnet.EthHeaderLen+20]))
	hop := dst
	if p := out.prefix(); !p.IsValid() || !p.Contains(dst) {
		hop = out.gateway()
	}
	local := out.prefix().Addr()
	if !hop.IsValid() || !local.IsValid() {
		f.Stats.NoRoute.Add(1)
		v.Release()
		return
	}
	if f.pending.Add(1) > f.maxPending {
		f.pending.Add(-1)
		f.Stats.PendingFull.Add(1)
		v.Release()
		return
	}
	p := &pendingFrame{f: f, out: out, v: v, vd: vd}
	p.mu.Lock()
	p.inCall = true
	p.mu.Unlock()
	f.resolver.Resolve(out, hop, local, p.resolved)
	p.mu.Lock()
	p.inCall = false
	got := p.got
	p.mu.Unlock()
	if got {
		p.finish()
	}
}

// pendingFrame is a forwarded frame waiting for its next hop's MAC.
type pendingFrame struct {
	f   *Forwarder
	out *Iface
	v   *buffer.View
	vd  nat.Verdict // the connection and direction to cache the hop in

	mu     sync.Mutex
	inCall bool // Resolve has not returned yet: send runs finish itself
	got    bool
	mac    gnet.MAC
	ok     bool
}

// resolved is the Resolver's callback. Called during Resolve it leaves
// the sending to send; called later (from the stack's ARP handling,
// under its locks) it sends from a goroutine of its own.
func (p *pendingFrame) resolved(mac gnet.MAC, ok bool) {
	p.mu.Lock()
	p.mac, p.ok, p.got = mac, ok, true
	inCall := p.inCall
	p.mu.Unlock()
	if !inCall {
		go p.finish()
	}
}

func (p *pendingFrame) finish() {
	f := p.f
	f.pending.Add(-1)
	if !p.ok {
		f.Stats.Unresolved.Add(1)
		p.v.Release()
		return
	}
	h := nat.Hop{Valid: true, Out: p.out.id, Dst: p.mac, Src: p.out.mac}
	p.vd.SetHop(h)
	b := p.v.AsSlice()
	copy(b[0:6], h.Dst[:])
	copy(b[6:12], h.Src[:])
	if p.out.transmit(p.v) {
		f.Stats.Forwarded.Add(1)
	}
}

// tooBig reports whether pkt (as received on in from the MAC sender) is
// longer than its egress interface's MTU, and if so answers it: RFC 1191 "fragmentation
// needed" with the next-hop MTU when it may not be fragmented (DF),
// nothing when it may (the router does not fragment; counted).
func (f *Forwarder) tooBig(in *Iface, sender, pkt []byte, vd nat.Verdict) bool {
	out := f.iface(vd.Out)
	if out == nil || int(pkt[2])<<8|int(pkt[3]) <= out.mtu {
		return false
	}
	f.Stats.TooBig.Add(1)
	if pkt[6]&0x40 == 0 {
		return true
	}
	src := in.prefix()
	if !src.IsValid() {
		return true
	}
	a := buffer.NewViewSize(gnet.EthHeaderLen + maxAnswer)
	b := a.AsSlice()
	n := nat.ICMPErrorParam(b[gnet.EthHeaderLen:], pkt, icmpDestUnreachable, codeFragNeeded, uint32(out.mtu), src.Addr())
	if n == 0 {
		a.Release()
		return true
	}
	copy(b[0:6], sender)
	in.answerTo(a, n)
	return true
}

// maxAnswer is the largest ICMP error the router sends: RFC 1812 4.3.2.3
// caps them at 576 bytes of IP datagram.
const maxAnswer = 576

// answer sends the ICMP error or TCP reset a verdict calls for back to the
// frame's sender, the link-layer neighbour it came from (no ARP needed).
func (f *Forwarder) answer(in *Iface, frame []byte, vd nat.Verdict) {
	src := in.prefix()
	if !src.IsValid() {
		return
	}
	pkt := frame[gnet.EthHeaderLen:]
	v := buffer.NewViewSize(gnet.EthHeaderLen + maxAnswer)
	b := v.AsSlice()
	var n int
	switch {
	case vd.Reason == nat.TTLExceeded:
		n = nat.ICMPError(b[gnet.EthHeaderLen:], pkt, icmpTimeExceeded, 0, src.Addr())
	case len(pkt) > 9 && pkt[9] == protoTCP:
		n = nat.TCPReset(b[gnet.EthHeaderLen:], pkt)
	default:
		n = nat.ICMPError(b[gnet.EthHeaderLen:], pkt, icmpDestUnreachable, codePortUnreachable, src.Addr())
	}
	if n == 0 {
		v.Release()
		return
	}
	copy(b[0:6], frame[6:12])
	in.answerTo(v, n)
}

// answerTo sends the IPv4 packet of n bytes after the Ethernet header in
// v (its destination MAC already set: the sender's) out of i, and
// releases v.
func (i *Iface) answerTo(v *buffer.View, n int) {
	b := v.AsSlice()
	copy(b[6:12], i.mac[:])
	b[12], b[13] = etherIPv4>>8, etherIPv4&0xff
	v.CapLength(gnet.EthHeaderLen + n)
	if i.transmit(v) {
		i.f.Stats.Answers.Add(1)
	}
}

// ICMP and IP numbers (RFC 792, RFC 790).
const (
	icmpDestUnreachable = 3
	codePortUnreachable = 3
	codeFragNeeded      = 4 // RFC 1191
	icmpTimeExceeded    = 11
	protoICMP           = 1
	protoTCP            = 6
	protoUDP            = 17
)

// peek reads what the input chain matches on from an IPv4 packet: the
// addresses, the protocol, the ports or the ICMP type. It does not check
// checksums; ok is false for a packet too short to say.
// peekLocal is peek for a packet addressed to the router (one of its
// addresses or a broadcast of its subnets); ok is false for any other.
// It reads the destination before building the Packet, whose netip
// addresses cost more than the check on the forwarding path.
func (f *Forwarder) peekLocal(p []byte) (firewall.Packet, bool) {
	if len(p) < ipv4Min || !f.isLocal4(binary.BigEndian.Uint32(p[16:20])) {
		return firewall.Packet{}, false
	}
	return peek(p)
}

func peek(p []byte) (firewall.Packet, bool) {
	if len(p) < ipv4Min || p[0]>>4 != 4 {
		return firewall.Packet{}, false
	}
	ihl := int(p[0]&0x0f) * 4
	if ihl < ipv4Min || len(p) < ihl {
		return firewall.Packet{}, false
	}
	fp := firewall.Packet{
		Proto: p[9],
		Src:   netip.AddrFrom4([4]byte(p[12:16])),
		Dst:   netip.AddrFrom4([4]byte(p[16:20])),
	}
	l4 := p[ihl:]
	first := p[6]&0x1f == 0 && p[7] == 0 // fragment offset 0: transport header present
	switch {
	case !first:
	case (fp.Proto == protoTCP || fp.Proto == protoUDP) && len(l4) >= 4:
		fp.SrcPort = uint16(l4[0])<<8 | uint16(l4[1])
		fp.DstPort = uint16(l4[2])<<8 | uint16(l4[3])
	case fp.Proto == protoICMP && len(l4) >= 1:
		fp.ICMPType = l4[0]
	}
	return fp, true
}
