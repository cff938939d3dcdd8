package nat

import "encoding/binary"

// plan is what the locked part of Forward decided; the packet is
// rewritten after the lock is released.
type plan struct {
	v   Verdict
	to  tuple  // for Forward: the tuple the packet leaves with
	mss uint16 // MSS clamp, 0 = none
}

type trackResult uint8

const (
	trackOK      trackResult = iota
	trackInvalid             // the packet does not fit the connection's state
	trackRestart             // the entry is finished and this packet starts a new connection
)

// Forward handles one IPv4 packet received on in: pkt starts at the IPv4
// header and may be longer than the IP total length (Ethernet padding).
// On a Forward verdict pkt has been rewritten in place; on any other
// verdict it is untouched. Forward allocates nothing, also when it creates
// a connection.
func (t *Table) Forward(pkt []byte, in Iface) Verdict {
	var p packet
	if r := p.parse(pkt); r != ReasonNone {
		return t.dropped(Drop, r)
	}
	if !headerChecksumOK(p.b[:p.ihl]) {
		return t.dropped(Drop, BadChecksum)
	}
	if p.frag && (!p.firstFr || p.isICMPError()) {
		return t.fragment(&p, in)
	}
	if p.isICMPError() {
		return t.icmpError(&p, in)
	}
	now := t.now()
	var pl plan
	t.mu.Lock()
	if c, d := t.lookup(p.t, now); c != nil && t.hitLocked(c, d, &p, in, now, &pl) {
		if p.frag { // fragFirstLocked's test, without the call
			t.fragFirstLocked(&p, &pl, now)
		}
		t.mu.Unlock()
		if pl.v.Action == Forward { // finish's common case, without the call
			rewrite(&p, &pl.to, pl.mss)
			return pl.v
		}
		return t.finish(&p, &pl)
	}
	t.mu.Unlock()
	return t.miss(&p, in, now)
}

func (t *Table) dropped(a Action, r DropReason) Verdict {
	t.drops[r].Add(1)
	return Verdict{Action: a, Reason: r}
}

func (t *Table) finish(p *packet, pl *plan) Verdict {
	switch pl.v.Action {
	case Forward:
		rewrite(p, &pl.to, pl.mss)
	case Drop, Reject:
		t.drops[pl.v.Reason].Add(1)
	}
	return pl.v
}

// hitLocked handles a packet of connection c in direction d received on
// in, filling pl (zero on entry): it reports false when the entry was
// removed and the packet must be treated as new. pl is filled in place,
// not returned: a plan is 40 bytes, and copying it out cost a tenth of
// Forward on mips32.
func (t *Table) hitLocked(c *Conn, d Dir, p *packet, in Iface, now int64, pl *plan) bool {
	act := c.act[d]
	pl.v = Verdict{Action: act, Out: c.out[d], Conn: c, Dir: d, Gen: c.gen.Load()}
	if act == Drop || in != c.in[d] {
		// The router's own direction coming in, or a packet on another
		// interface than its direction's (spoofed: a WAN host posing as
		// a LAN host's peer, or the reverse).
		pl.v.Action, pl.v.Reason = Drop, Invalid
		return true
	}
	if act == Forward && p.b[ipOffTTL] <= 1 {
		pl.v.Action, pl.v.Reason = Drop, TTLExceeded
		return true
	}
	tmo, r := t.track(c, d, p)
	switch r {
	case trackInvalid:
		pl.v.Action, pl.v.Reason = Drop, Invalid
		return true
	case trackRestart:
		t.remove(c)
		*pl = plan{}
		return false
	}
	c.expires = now + tmo
	c.pkts[d]++
	c.bytes[d] += uint64(len(p.b))
	pl.to = c.tuple[1-d].inverse()
	pl.mss = c.mss
	return true
}

// track runs the protocol's state machine for a packet of c in direction
// d and returns the connection's new timeout.
func (t *Table) track(c *Conn, d Dir, p *packet) (int64, trackResult) {
	f := c.flags.Load()
	switch Proto(p.t.proto) {
	case ProtoTCP:
		return t.trackTCP(c, d, p.tcpFlags)
	case ProtoUDP:
		// Linux (nf_conntrack_proto_udp.c) calls a flow that keeps
		// talking after its first reply a stream: longer timeout,
		// never evicted early.
		switch {
		case f&flagAssured != 0: // a stream's every packet: no store
			return t.tmo[tmoUDPStream], trackOK
		case f&flagReplied != 0:
			c.flags.Store(f | flagAssured)
			return t.tmo[tmoUDPStream], trackOK
		case d == Reply:
			c.flags.Store(f | flagReplied)
		}
		return t.tmo[tmoUDP], trackOK
	case ProtoICMP:
		if d == Reply {
			c.flags.Store(f | flagReplied)
		}
		return t.tmo[tmoICMP], trackOK
	}
	switch {
	case f&flagReplied != 0:
		c.flags.Store(f | flagAssured)
	case d == Reply:
		c.flags.Store(f | flagReplied)
	}
	return t.tmo[tmoGeneric], trackOK
}

// trackTCP is a simplified form of Linux's TCP tracking
// (nf_conntrack_proto_tcp.c, tcp_conntracks) over the RFC 9293 section
// 3.3.2 state diagram: it follows SYN, SYN-ACK, ACK, FIN and RST but does
// not check sequence numbers or windows.
func (t *Table) trackTCP(c *Conn, d Dir, fl uint8) (int64, trackResult) {
	s := c.state
	syn, ack, fin, rst := fl&tcpSYN != 0, fl&tcpACK != 0, fl&tcpFIN != 0, fl&tcpRST != 0
	switch {
	case rst:
		s = TCPClose
	case syn && !ack:
		switch {
		case s == TCPNone:
			s = TCPSynSent
		case s == TCPTimeWait || s == TCPClose:
			if d == Reply {
				// The other end opens a connection on the same ports:
				// a new connection, decided by the policy.
				return 0, trackRestart
			}
			c.flags.Store(0) // a new life on the same mapping: no reply yet
			s = TCPSynSent
		case s == TCPSynSent && d == Reply:
			s = TCPSynRecv // simultaneous open
			c.flags.Store(c.flags.Load() | flagReplied)
		}
	case syn && ack:
		switch {
		case d == Reply && (s == TCPSynSent || s == TCPSynRecv):
			s = TCPSynRecv
			c.flags.Store(c.flags.Load() | flagReplied)
		case d == Original && s == TCPSynRecv:
			// the answer of a simultaneous open
		case s == TCPSynSent:
			return 0, trackInvalid
		}
	case s == TCPSynSent:
		if d == Reply {
			return 0, trackInvalid // only SYN-ACK or RST answers a SYN
		}
	case fin:
		switch s {
		case TCPSynRecv, TCPEstablished:
			s, c.finDir = TCPFinWait, d
		case TCPFinWait, TCPCloseWait:
			if d != c.finDir {
				s = TCPLastAck
			}
		}
	case ack:
		switch s {
		case TCPSynRecv:
			if c.flags.Load()&flagReplied != 0 {
				s = TCPEstablished
				c.flags.Store(c.flags.Load() | flagAssured)
			}
		case TCPFinWait:
			if d != c.finDir {
				s = TCPCloseWait
			}
		case TCPLastAck:
			if d == c.finDir {
				s = TCPTimeWait
			}
		}
	}
	c.state = s
	return t.tmo[tcpTimeout[s]], trackOK
}

var tcpTimeout = [...]int{
	TCPNone: tmoSynSent, TCPSynSent: tmoSynSent, TCPSynRecv: tmoSynRecv,
	TCPEstablished: tmoEstablished, TCPFinWait: tmoFinWait, TCPCloseWait: tmoCloseWait,
	TCPLastAck: tmoLastAck, TCPTimeWait: tmoTimeWait, TCPClose: tmoClose,
}

// miss asks the policy about a packet that matches no connection and
// creates the connection if it says Forward.
func (t *Table) miss(p *packet, in Iface, now int64) Verdict {
	req := t.reqPool.Get().(*Request)
	*req = Request{In: in, Proto: Proto(p.t.proto), ICMPType: p.icmpType, ICMPCode: p.icmpCode}
	req.Src, req.Dst = p.t.addrPorts()
	t.pols.Add(1)
	dec := t.policy.Decide(req)
	t.reqPool.Put(req)
	switch dec.Action {
	case Local:
		return Verdict{Action: Local}
	case Reject:
		return t.dropped(Reject, Denied)
	case Forward:
	default:
		return t.dropped(Drop, Denied)
	}
	if !p.canCreate() {
		return t.dropped(Drop, Invalid)
	}
	if p.b[ipOffTTL] <= 1 {
		return t.dropped(Drop, TTLExceeded)
	}
	if (dec.SNAT.IsValid() && !dec.SNAT.Is4()) || (dec.DNAT.IsValid() && !dec.DNAT.Addr().Is4()) {
		return t.dropped(Drop, Denied) // an IPv6 rewrite for an IPv4 packet: the policy is wrong
	}
	t.mu.Lock()
	if c, d := t.lookup(p.t, now); c != nil { // another goroutine created it meanwhile
		var pl plan
		if t.hitLocked(c, d, p, in, now, &pl) {
			t.fragFirstLocked(p, &pl, now)
			t.mu.Unlock()
			return t.finish(p, &pl)
		}
	}
	pl, r := t.createLocked(p, in, &dec, now)
	if r == ReasonNone {
		t.fragFirstLocked(p, &pl, now)
	}
	t.mu.Unlock()
	if r != ReasonNone {
		return t.dropped(Drop, r)
	}
	return t.finish(p, &pl)
}

func hasPorts(proto uint8) bool {
	switch Proto(proto) {
	case ProtoTCP, ProtoUDP, ProtoICMP:
		return true
	}
	return false
}

// createLocked creates the connection for p with the policy's NAT.
func (t *Table) createLocked(p *packet, in Iface, dec *Decision, now int64) (plan, DropReason) {
	orig := p.t
	out := orig // as the packet leaves
	if dec.DNAT.IsValid() {
		out.dst = u32(dec.DNAT.Addr())
		if dp := dec.DNAT.Port(); dp != 0 && Proto(orig.proto) != ProtoICMP && hasPorts(orig.proto) {
			out.dport = dp
		}
	}
	if dec.SNAT.IsValid() {
		out.src = u32(dec.SNAT)
	}
	reply := out.inverse()
	if reply == orig {
		return plan{}, Invalid // a packet to itself on the same port
	}
	if t.taken(reply, now) {
		if !dec.SNAT.IsValid() || !hasPorts(orig.proto) {
			return plan{}, NoPort
		}
		if !t.pickPort(&out, orig, now) {
			return plan{}, NoPort
		}
		reply = out.inverse()
	}
	c, i := t.alloc(orig, now)
	if c == nil {
		return plan{}, TableFull
	}
	c.tuple = [2]tuple{orig, reply}
	c.act = [2]Action{Forward, Forward}
	c.out = [2]Iface{dec.Out, in}
	c.in = [2]Iface{in, dec.Out}
	c.mss = dec.MSS
	c.state = TCPNone
	c.finDir = Original
	c.local = false
	c.pkts, c.bytes = [2]uint64{}, [2]uint64{}
	c.flags.Store(0)
	c.used = true
	t.insert(c, i)
	t.created.Add(1)
	tmo, _ := t.track(c, Original, p)
	c.expires = now + tmo
	c.pkts[Original] = 1
	c.bytes[Original] = uint64(len(p.b))
	return plan{
		v:   Verdict{Action: Forward, Out: dec.Out, Conn: c, Dir: Original, New: true, Gen: c.gen.Load()},
		to:  out,
		mss: dec.MSS,
	}, ReasonNone
}

// pickPort finds a source port (ICMP: echo id) in the masquerade range
// whose reply tuple is free, starting at an offset hashed from the
// original tuple so hosts spread over the range, trying at most
// maxPortTries ports.
func (t *Table) pickPort(out *tuple, orig tuple, now int64) bool {
	span := uint32(t.portHi-t.portLo) + 1
	start := orig.hash(^t.seed) % span
	for i := uint32(0); i < maxPortTries && i < span; i++ {
		out.sport = t.portLo + uint16((start+i)%span)
		if !t.taken(out.inverse(), now) {
			return true
		}
	}
	return false
}

// rewrite makes p leave as tuple to: addresses and ports (RFC 1624
// incremental checksum updates, the pseudo-header included), TTL - 1,
// the IP header checksum, and the MSS clamp of a SYN. The transport
// checksum's changes are summed first and folded into it once: each
// fold is a loop on mips32, and a rewrite changes up to six words.
func rewrite(p *packet, to *tuple, mss uint16) {
	b := p.b
	from := &p.t // by pointer, like to: mips32 passes and copies structs in memory
	l4 := b[p.ihl:]
	var delta uint32 // RFC 1624 eqn. 3: the sum of ~m + m' over the changed words
	if from.src != to.src {
		binary.BigEndian.PutUint32(b[ipOffSrc:], to.src)
		delta += csumDelta32(from.src, to.src)
	}
	if from.dst != to.dst {
		binary.BigEndian.PutUint32(b[ipOffDst:], to.dst)
		delta += csumDelta32(from.dst, to.dst)
	}
	// The IPv4 header checksum is updated, not recomputed (RFC 1624, as
	// RFC 1812 section 5.3.1 allows for the TTL): the addresses' changes
	// and TTL - 1, which lowers the (TTL, protocol) word by 0x100 (TTL is
	// at least 2 here). Summing the header cost about 100 instructions
	// per packet on mips32 (natbench), and an update keeps a header
	// damaged on the way in detectably damaged (a recomputed checksum
	// would vouch for it).
	ttlProto := uint16(b[ipOffTTL])<<8 | uint16(from.proto)
	ipDelta := delta + uint32(^ttlProto) + uint32(ttlProto-0x100)
	switch Proto(from.proto) {
	case ProtoTCP, ProtoUDP:
		if from.sport != to.sport {
			binary.BigEndian.PutUint16(l4[0:], to.sport)
			delta += uint32(^from.sport) + uint32(to.sport)
		}
		if from.dport != to.dport {
			binary.BigEndian.PutUint16(l4[2:], to.dport)
			delta += uint32(^from.dport) + uint32(to.dport)
		}
		if Proto(from.proto) == ProtoTCP {
			if delta != 0 {
				hc := binary.BigEndian.Uint16(l4[tcpOffCsum:])
				binary.BigEndian.PutUint16(l4[tcpOffCsum:], ^csumFold(uint32(^hc)+delta))
			}
			if mss != 0 && p.tcpFlags&tcpSYN != 0 {
				clampMSS(l4[:p.tcpDoff], mss)
			}
		} else if hc := binary.BigEndian.Uint16(l4[udpOffCsum:]); hc != 0 && delta != 0 {
			// 0: sent without checksum (RFC 768), stays so.
			nc := ^csumFold(uint32(^hc) + delta)
			if nc == 0 {
				nc = 0xffff // RFC 768: a computed 0 is sent as all ones
			}
			binary.BigEndian.PutUint16(l4[udpOffCsum:], nc)
		}
	case ProtoICMP:
		set16(l4, icmpOffID, to.sport, icmpOffCsum, 0)
	}
	b[ipOffTTL]--
	hc := binary.BigEndian.Uint16(b[ipOffCsum:])
	binary.BigEndian.PutUint16(b[ipOffCsum:], ^csumFold(uint32(^hc)+ipDelta))
}

// clampMSS lowers the MSS option (RFC 9293 section 3.7.1) of TCP header h
// to mss if it is larger, walking the options without trusting their
// lengths.
func clampMSS(h []byte, mss uint16) {
	for i := tcpMinHeader; i < len(h); {
		switch h[i] {
		case tcpOptEnd:
			return
		case tcpOptNOP:
			i++
			continue
		}
		if i+1 >= len(h) {
			return
		}
		l := int(h[i+1])
		if l < 2 || i+l > len(h) {
			return
		}
		if h[i] == tcpOptMSS && l == tcpOptMSSLen && binary.BigEndian.Uint16(h[i+2:]) > mss {
			set16(h, i+2, mss, tcpOffCsum, 0)
		}
		i += l
	}
}

// askAddrs asks the policy about p by addresses only (no ports).
func (t *Table) askAddrs(p *packet, in Iface) Action {
	req := t.reqPool.Get().(*Request)
	*req = Request{In: in, Proto: Proto(p.t.proto), ICMPType: p.icmpType, ICMPCode: p.icmpCode}
	req.Src, req.Dst = tuple{src: p.t.src, dst: p.t.dst}.addrPorts()
	t.pols.Add(1)
	a := t.policy.Decide(req).Action
	t.reqPool.Put(req)
	return a
}

// Output tracks a packet the router itself sends out interface out. It
// creates (or refreshes) a connection without NAT, so replies come back
// from Forward as Local with their Conn. It never rewrites the packet.
// It returns false only when the table is full; the caller sends anyway.
// A packet whose reply would collide with a masqueraded connection is not
// tracked (its replies reach the policy as new packets).
func (t *Table) Output(pkt []byte, out Iface) bool {
	var p packet
	if p.parse(pkt) != ReasonNone || p.frag || p.isICMPError() {
		return true
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, d := t.lookup(p.t, now); c != nil {
		tmo, r := t.track(c, d, &p)
		switch r {
		case trackOK:
			c.expires = now + tmo
			c.pkts[d]++
			c.bytes[d] += uint64(len(p.b))
			return true
		case trackInvalid:
			return true
		}
		t.remove(c)
	}
	if !p.canCreate() {
		return true
	}
	reply := p.t.inverse()
	if reply == p.t || t.taken(reply, now) {
		return true
	}
	c, i := t.alloc(p.t, now)
	if c == nil {
		return false
	}
	c.tuple = [2]tuple{p.t, reply}
	c.act = [2]Action{Drop, Local} // the router's own packets never come in through Forward
	c.out = [2]Iface{out, 0}
	c.in = [2]Iface{out, out}
	c.mss = 0
	c.state = TCPNone
	c.finDir = Original
	c.local = true
	c.pkts, c.bytes = [2]uint64{1, 0}, [2]uint64{uint64(len(p.b)), 0}
	c.flags.Store(0)
	c.used = true
	t.insert(c, i)
	t.created.Add(1)
	tmo, _ := t.track(c, Original, &p)
	c.expires = now + tmo
	return true
}
