// Package ethudp is a net.PacketConn that speaks UDP over raw Ethernet
// frames, the way a DHCP client needs it: it must send and receive before
// its interface has an address, so it cannot use an IP stack's UDP socket.
// It is the firmware's equivalent of a packet socket bound to one UDP port.
//
// The owner wires it to the link: received frames go to Deliver (the
// forwarding layer calls it for every IPv4/UDP frame to the port), frames
// to send leave through Config.Send. Only untagged Ethernet II frames with
// unfragmented IPv4 are handled; DHCP messages never need fragmentation.
package ethudp

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Frame layout constants (IEEE 802.3 Ethernet II, RFC 791, RFC 768).
const (
	ethHeaderLen  = 14
	ipv4HeaderLen = 20 // the header this package writes: no options
	udpHeaderLen  = 8
	etherTypeIPv4 = 0x0800
	protoUDP      = 17
	defaultTTL    = 64 // RFC 1700's recommended default TTL, as Linux uses
	headersLen    = ethHeaderLen + ipv4HeaderLen + udpHeaderLen

	// DefaultMTU is the Ethernet payload size when Config.MTU is zero.
	DefaultMTU = 1500
	// DefaultQueueLen bounds the received datagrams waiting for ReadFrom.
	// A DHCP exchange has at most a few replies in flight (one per server).
	DefaultQueueLen = 8
	// peerTableLen bounds the IP→MAC table learnt from received frames.
	// The client talks to one server; a few more cover rogue or second
	// servers on the segment without letting them grow memory.
	peerTableLen = 4
)

var broadcastMAC = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// Config describes the link end the Conn speaks on.
type Config struct {
	// MAC is the source address of sent frames and the unicast
	// destination address accepted on receive.
	MAC [6]byte
	// Port is the local UDP port (68 for a DHCP client).
	Port uint16
	// Send puts one complete Ethernet frame on the wire. The frame is only
	// valid during the call; Send must copy it if it keeps it.
	Send func(frame []byte) error
	// MTU is the largest IPv4 packet (0: DefaultMTU).
	MTU int
	// QueueLen bounds the datagrams waiting for ReadFrom (0:
	// DefaultQueueLen); more are dropped and counted.
	QueueLen int
}

// Stats counts what Deliver and WriteTo did. Read with Conn.Stats.
type Stats struct {
	Received  uint64 // datagrams queued for ReadFrom
	QueueFull uint64 // valid datagrams dropped because the queue was full
	Malformed uint64 // frames failing validation (lengths, checksums, version, fragments)
	NotForUs  uint64 // valid frames for another MAC, IP address or port, or not IPv4/UDP
	Sent      uint64 // frames handed to Send
	SendError uint64 // frames Send refused
}

type datagram struct {
	buf  []byte // capacity MTU; len = payload length
	src  netip.AddrPort
	full bool
}

type peer struct {
	ip  netip.Addr
	mac [6]byte
}

// Conn is a UDP endpoint on raw Ethernet frames. It implements
// net.PacketConn; it is safe for concurrent use.
type Conn struct {
	cfg Config

	mu       sync.Mutex
	addr     netip.Addr
	queue    []datagram
	head, n  int
	wake     chan struct{} // closed to wake a waiting ReadFrom; nil when none waits
	closed   bool
	rdl, wdl time.Time
	peers    [peerTableLen]peer
	nextPeer int

	txMu  sync.Mutex // serializes use of txbuf and calls of Send
	txbuf []byte

	received, queueFull, malformed, notForUs, sent, sendErr atomic.Uint64
}

// New makes a Conn. Its source address is 0.0.0.0 until SetAddr.
func New(cfg Config) *Conn {
	if cfg.MTU <= 0 {
		cfg.MTU = DefaultMTU
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	c := &Conn{cfg: cfg, addr: netip.IPv4Unspecified()}
	c.queue = make([]datagram, cfg.QueueLen)
	for i := range c.queue {
		c.queue[i].buf = make([]byte, 0, cfg.MTU)
	}
	c.txbuf = make([]byte, ethHeaderLen+cfg.MTU)
	return c
}

// SetAddr sets the source address of sent datagrams and the unicast
// destination address accepted on receive. Before it is called (or after
// SetAddr(0.0.0.0)) datagrams to any destination address are accepted, as
// RFC 2131 4.1 requires of a client that has no address yet: a server may
// unicast its offer to the address it offers.
func (c *Conn) SetAddr(a netip.Addr) {
	if !a.Is4() {
		a = netip.IPv4Unspecified()
	}
	c.mu.Lock()
	c.addr = a
	c.mu.Unlock()
}

// Addr returns the current source address.
func (c *Conn) Addr() netip.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addr
}

// LocalMAC is the Conn's Ethernet address.
func (c *Conn) LocalMAC() [6]byte { return c.cfg.MAC }

// Stats returns the counters.
func (c *Conn) Stats() Stats {
	return Stats{
		Received: c.received.Load(), QueueFull: c.queueFull.Load(),
		Malformed: c.malformed.Load(), NotForUs: c.notForUs.Load(),
		Sent: c.sent.Load(), SendError: c.sendErr.Load(),
	}
}

// Deliver offers one received Ethernet frame. It reports whether the frame
// was taken: a valid IPv4/UDP datagram to this Conn's MAC (or broadcast),
// address and port, with room in the queue. The payload is copied; frame
// is not retained. Deliver allocates nothing.
func (c *Conn) Deliver(frame []byte) bool {
	payload, src, srcMAC, dstIP, verdict := parse(frame, c.cfg.MAC, c.cfg.Port)
	switch verdict {
	case verdictMalformed:
		c.malformed.Add(1)
		return false
	case verdictNotForUs:
		c.notForUs.Add(1)
		return false
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	if c.addr.IsValid() && !c.addr.IsUnspecified() && dstIP != c.addr && dstIP != limitedBroadcast {
		c.mu.Unlock()
		c.notForUs.Add(1)
		return false
	}
	c.learn(src.Addr(), srcMAC)
	if c.n == len(c.queue) || len(payload) > cap(c.queue[0].buf) {
		c.mu.Unlock()
		c.queueFull.Add(1)
		return false
	}
	d := &c.queue[(c.head+c.n)%len(c.queue)]
	d.buf = append(d.buf[:0], payload...)
	d.src = src
	c.n++
	if c.wake != nil {
		close(c.wake)
		c.wake = nil
	}
	c.mu.Unlock()
	c.received.Add(1)
	return true
}

var limitedBroadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})

// learn remembers which MAC address sent from ip, so replies to it (a
// DHCP renewal to the server) need no ARP. Called with c.mu held.
func (c *Conn) learn(ip netip.Addr, mac [6]byte) {
	if !ip.IsGlobalUnicast() && !ip.IsPrivate() {
		return
	}
	if mac[0]&1 != 0 { // group address: not a station
		return
	}
	for i := range c.peers {
		if c.peers[i].ip == ip {
			c.peers[i].mac = mac
			return
		}
	}
	c.peers[c.nextPeer] = peer{ip: ip, mac: mac}
	c.nextPeer = (c.nextPeer + 1) % len(c.peers)
}

func (c *Conn) lookup(ip netip.Addr) ([6]byte, bool) {
	for i := range c.peers {
		if c.peers[i].ip == ip && ip.IsValid() {
			return c.peers[i].mac, true
		}
	}
	return [6]byte{}, false
}

// ReadFrom returns the next received datagram's payload and its sender as
// a *net.UDPAddr. A payload longer than p is truncated to len(p).
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	c.mu.Lock()
	for {
		if c.closed {
			c.mu.Unlock()
			return 0, nil, net.ErrClosed
		}
		if c.n > 0 {
			d := &c.queue[c.head]
			n := copy(p, d.buf)
			src := d.src
			d.buf = d.buf[:0]
			c.head = (c.head + 1) % len(c.queue)
			c.n--
			c.mu.Unlock()
			return n, net.UDPAddrFromAddrPort(src), nil
		}
		dl := c.rdl
		if !dl.IsZero() && !time.Now().Before(dl) {
			c.mu.Unlock()
			return 0, nil, os.ErrDeadlineExceeded
		}
		if c.wake == nil {
			c.wake = make(chan struct{})
		}
		wake := c.wake
		c.mu.Unlock()
		if dl.IsZero() {
			<-wake
		} else {
			t := time.NewTimer(time.Until(dl))
			select {
			case <-wake:
			case <-t.C:
			}
			t.Stop()
		}
		c.mu.Lock()
	}
}

// errTooBig reports a datagram that does not fit the MTU (this package
// does not fragment).
var errTooBig = errors.New("ethudp: datagram larger than the MTU")

// WriteTo sends p as one UDP datagram to addr (a *net.UDPAddr with an IPv4
// address). The destination MAC is broadcast for 255.255.255.255 and for
// addresses not yet seen; otherwise the MAC that sent from addr.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, &net.OpError{Op: "write", Net: "udp4", Addr: addr, Err: errors.New("ethudp: not a *net.UDPAddr")}
	}
	dst, ok := netip.AddrFromSlice(ua.IP)
	dst = dst.Unmap()
	if !ok || !dst.Is4() || ua.Port <= 0 || ua.Port > 0xffff {
		return 0, &net.OpError{Op: "write", Net: "udp4", Addr: addr, Err: errors.New("ethudp: not an IPv4 UDP address")}
	}
	if ipv4HeaderLen+udpHeaderLen+len(p) > c.cfg.MTU {
		return 0, &net.OpError{Op: "write", Net: "udp4", Addr: addr, Err: errTooBig}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, net.ErrClosed
	}
	if !c.wdl.IsZero() && !time.Now().Before(c.wdl) {
		c.mu.Unlock()
		return 0, os.ErrDeadlineExceeded
	}
	dstMAC := broadcastMAC
	if dst != limitedBroadcast {
		if m, ok := c.lookup(dst); ok {
			dstMAC = m
		}
	}
	src := c.addr
	c.mu.Unlock()
	// Send runs without c.mu so that it may loop back into Deliver.
	c.txMu.Lock()
	frame := buildFrame(c.txbuf, dstMAC, c.cfg.MAC, src, dst, c.cfg.Port, uint16(ua.Port), p)
	err := c.cfg.Send(frame)
	c.txMu.Unlock()
	if err != nil {
		c.sendErr.Add(1)
		return 0, &net.OpError{Op: "write", Net: "udp4", Addr: addr, Err: err}
	}
	c.sent.Add(1)
	return len(p), nil
}

// Close wakes readers with net.ErrClosed; later calls fail.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	c.closed = true
	c.wakeLocked()
	return nil
}

func (c *Conn) wakeLocked() {
	if c.wake != nil {
		close(c.wake)
		c.wake = nil
	}
}

// LocalAddr is the current address and port.
func (c *Conn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	return net.UDPAddrFromAddrPort(netip.AddrPortFrom(c.addr, c.cfg.Port))
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl, c.wdl = t, t
	c.wakeLocked()
	return nil
}

// SetReadDeadline sets the time after which ReadFrom fails with
// os.ErrDeadlineExceeded; a waiting ReadFrom notices the change.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rdl = t
	c.wakeLocked()
	return nil
}

// SetWriteDeadline sets the time after which WriteTo fails. Writes never
// block, so it only matters once passed.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wdl = t
	return nil
}

var _ net.PacketConn = (*Conn)(nil)
