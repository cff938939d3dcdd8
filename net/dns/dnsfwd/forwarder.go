package dnsfwd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/net/connlimit"
)

// Sizes and limits; the defaults are sized for a 32 MiB board.
const (
	// ednsUDPSize is the UDP payload size the forwarder advertises and
	// the most it sends over UDP: 1232 bytes, DNS Flag Day 2020's value,
	// which fits an IPv6 minimum MTU (1280) without fragmenting.
	ednsUDPSize = 1232
	// plainUDPSize is the limit for a client without EDNS (RFC 1035 §4.2.1).
	plainUDPSize = 512
	// maxTCPMsg is the largest DNS message (RFC 1035 §4.2.2 length prefix).
	maxTCPMsg = 65535
	// udpReadSize is the receive buffer for queries and upstream UDP
	// answers: larger than anything we invite, so an upstream that
	// ignores our 1232 is still read whole.
	udpReadSize = 4096

	// DefaultCacheSize is OpenWrt's default dnsmasq cachesize (1000
	// names). With DefaultCacheBytes as the second bound, the cache
	// costs at most 1 MiB, 3% of a 32 MiB board; typical answers are
	// 100-300 bytes, so the entry count binds first.
	DefaultCacheSize  = 1000
	DefaultCacheBytes = 1 << 20
	// DefaultMaxInFlight is dnsmasq's dns-forward-max default (150).
	// Each in-flight query costs a goroutine and a 4 KiB buffer:
	// about 2 MiB at the limit.
	DefaultMaxInFlight = 150
	// DefaultTimeout is one upstream try. Two upstreams tried in turn
	// finish within dig's and glibc's 5 s client timeout.
	DefaultTimeout = 2 * time.Second
	// DefaultMaxTCPConns bounds open DNS-over-TCP connections; a
	// quarter of them may come from one address.
	DefaultMaxTCPConns = 32
	// DefaultTCPIdleTimeout closes an idle client connection; RFC 7766
	// §6.2.3 asks servers to keep idle timeouts to the order of seconds.
	DefaultTCPIdleTimeout = 10 * time.Second
)

// LocalNames finds a LAN host's address by its hostname (the DHCP
// server's leases). host is one lowercase label.
type LocalNames interface {
	Lookup(host string) (netip.Addr, bool)
}

// LocalReverse is an optional interface of LocalNames: the hostname
// holding a LAN address, for PTR queries.
type LocalReverse interface {
	LookupAddr(addr netip.Addr) (host string, ok bool)
}

// Config configures a Forwarder. Zero values take the defaults above.
type Config struct {
	// Domain is the LAN domain ("lan"): <host>.<Domain> is answered from
	// Local and RouterName and never forwarded. Empty: none.
	Domain string
	// RouterName and RouterAddr answer "<RouterName>", "<RouterName>.<Domain>"
	// and the PTR of RouterAddr.
	RouterName string
	RouterAddr netip.Addr
	Local      LocalNames
	// Upstreams returns the current servers; called for every forwarded
	// query, so it may change at any time. Nil or empty: SERVFAIL.
	Upstreams func() []netip.AddrPort
	// Dial opens "udp" or "tcp" connections to an upstream (gVisor's
	// gonet on the firmware, the host's net.Dialer in tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// CacheSize bounds the cached answers, CacheBytes their memory.
	CacheSize  int
	CacheBytes int
	// MaxInFlight bounds concurrent upstream queries; a UDP query over
	// the bound is dropped (the client retries), a TCP one gets SERVFAIL.
	MaxInFlight int
	// Timeout is one upstream try.
	Timeout time.Duration
	// RebindProtection refuses upstream A/AAAA answers in private,
	// loopback or link-local space for names outside RebindAllow
	// (OpenWrt's rebind_protection=1). The zero value is off: the
	// router's configuration must set it, as OpenWrt does by default.
	RebindProtection bool
	// RebindAllow are domains (and their subdomains) whose answers may
	// point into private space (OpenWrt's rebind_domain).
	RebindAllow []string
	// MaxTCPConns and TCPIdleTimeout bound DNS over TCP.
	MaxTCPConns    int
	TCPIdleTimeout time.Duration
	// Now is the clock for cache lifetimes (time.Now if nil).
	Now func() time.Time
}

// Stats are a Forwarder's counters since New.
type Stats struct {
	Queries            uint64 // client messages received
	CacheHits          uint64
	CacheMisses        uint64 // queries that needed an upstream
	LocalAnswers       uint64 // answered from the router's names, leases, or as local-only names
	UpstreamQueries    uint64 // tries sent to upstreams (UDP and TCP)
	UpstreamErrors     uint64 // tries that failed: no answer in time, SERVFAIL/REFUSED, malformed
	UpstreamMismatched uint64 // datagrams from an upstream that did not answer our query (ID/question)
	RebindBlocked      uint64 // answers refused by rebind protection
	Malformed          uint64 // client messages dropped or answered FORMERR
	NotImplemented     uint64 // opcodes other than QUERY
	Refused            uint64 // classes other than IN, zone transfers
	ServFail           uint64 // queries no upstream answered
	InFlightDrops      uint64 // queries refused because MaxInFlight were in flight
	Truncated          uint64 // UDP answers sent with TC set
	TCPRejected        uint64 // TCP connections closed over MaxTCPConns
	CacheEntries       int
	CacheBytes         int
	CacheEvictions     uint64
}

type counters struct {
	queries, hits, misses, local, upQueries, upErrors, upMismatch, rebind,
	malformed, notImp, refused, servFail, drops, truncated atomic.Uint64
}

// Forwarder is the router's DNS forwarder and cache.
type Forwarder struct {
	cfg         Config
	domain      []byte                     // wire format, lowercase; nil if none
	routerName  string                     // lowercase
	routerAddr  atomic.Pointer[netip.Addr] // Config.RouterAddr, then SetRouterAddr's
	rebindAllow [][]byte
	cache       *cache
	inFlight    chan struct{}
	c           counters

	mu        sync.Mutex
	listeners []*connlimit.Listener
}

// New checks cfg and fills in defaults.
func New(cfg Config) (*Forwarder, error) {
	if cfg.Dial == nil {
		return nil, errors.New("dnsfwd: Config.Dial is required")
	}
	f := &Forwarder{}
	f.routerAddr.Store(&cfg.RouterAddr)
	if cfg.Domain != "" {
		if f.domain = wireName(cfg.Domain); f.domain == nil || len(f.domain) == 1 {
			return nil, fmt.Errorf("dnsfwd: invalid domain %q", cfg.Domain)
		}
	}
	if cfg.RouterName != "" {
		w := wireName(cfg.RouterName)
		if w == nil || labels(w) != 1 {
			return nil, fmt.Errorf("dnsfwd: router name %q must be one label", cfg.RouterName)
		}
		f.routerName = string(firstLabel(w))
	}
	for _, d := range cfg.RebindAllow {
		w := wireName(d)
		if w == nil {
			return nil, fmt.Errorf("dnsfwd: invalid rebind-allowed domain %q", d)
		}
		f.rebindAllow = append(f.rebindAllow, w)
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.CacheBytes == 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTCPConns <= 0 {
		cfg.MaxTCPConns = DefaultMaxTCPConns
	}
	if cfg.TCPIdleTimeout <= 0 {
		cfg.TCPIdleTimeout = DefaultTCPIdleTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	f.cfg = cfg
	f.cache = newCache(cfg.CacheSize, cfg.CacheBytes)
	f.inFlight = make(chan struct{}, cfg.MaxInFlight)
	return f, nil
}

// Flush empties the cache (for example when the WAN, and with it the
// upstreams, change).
func (f *Forwarder) Flush() { f.cache.flush() }

// SetRouterAddr changes the address the router's own name answers with
// (the router's LAN address changed).
func (f *Forwarder) SetRouterAddr(a netip.Addr) { f.routerAddr.Store(&a) }

func (f *Forwarder) routerAddress() netip.Addr { return *f.routerAddr.Load() }

// Stats returns the counters.
func (f *Forwarder) Stats() Stats {
	s := Stats{
		Queries:            f.c.queries.Load(),
		CacheHits:          f.c.hits.Load(),
		CacheMisses:        f.c.misses.Load(),
		LocalAnswers:       f.c.local.Load(),
		UpstreamQueries:    f.c.upQueries.Load(),
		UpstreamErrors:     f.c.upErrors.Load(),
		UpstreamMismatched: f.c.upMismatch.Load(),
		RebindBlocked:      f.c.rebind.Load(),
		Malformed:          f.c.malformed.Load(),
		NotImplemented:     f.c.notImp.Load(),
		Refused:            f.c.refused.Load(),
		ServFail:           f.c.servFail.Load(),
		InFlightDrops:      f.c.drops.Load(),
		Truncated:          f.c.truncated.Load(),
	}
	s.CacheEntries, s.CacheBytes, s.CacheEvictions = f.cache.len()
	f.mu.Lock()
	for _, l := range f.listeners {
		s.TCPRejected += l.Stats().Rejected()
	}
	f.mu.Unlock()
	return s
}

// worker holds one serving goroutine's buffers, reused for every query.
type worker struct {
	q   query
	out []byte
}

// udpLimit is how large a UDP answer to q may be.
func udpLimit(q *query) int {
	if !q.edns {
		return plainUDPSize
	}
	return min(max(int(q.udpSize), plainUDPSize), ednsUDPSize)
}

// handle answers what it can without an upstream: malformed and refused
// queries, local names and cache hits. It returns the answer (nil: send
// nothing) or forward=true when the query needs an upstream; w.q then
// holds the parsed query. A cache hit allocates nothing.
func (f *Forwarder) handle(w *worker, in []byte, limit int) (out []byte, forward bool) {
	f.c.queries.Add(1)
	q := &w.q
	out = w.out[:0]
	switch parseQuery(in, q) {
	case verdictDrop:
		f.c.malformed.Add(1)
		return nil, false
	case verdictFormErr:
		f.c.malformed.Add(1)
		return appendHeaderOnly(out, in, rcodeFormatError), false
	case verdictNotImp:
		f.c.notImp.Add(1)
		return appendHeaderOnly(out, in, rcodeNotImplemented), false
	}
	if q.edns && q.version != 0 {
		// RFC 6891 §6.1.3: BADVERS, with our version (0) in our OPT.
		out = appendHeader(out, q, rcodeBadVers, false, false, 1, 0, 0, 1)
		out = append(out, in[headerLen:q.qEnd]...)
		return appendOPT(out, rcodeBadVers, q.do, false), false
	}
	if q.qclass != classINET || q.qtype == typeAXFR || q.qtype == typeIXFR {
		f.c.refused.Add(1)
		return appendRcodeOnly(out, in, q, rcodeRefused, false, false), false
	}
	if limit == 0 {
		limit = udpLimit(q)
	}
	out, sc := f.answerLocal(out, in, q)
	if sc == scopeLocal {
		f.c.local.Add(1)
		return f.fit(out, in, q, limit), false
	}
	now := f.cfg.Now()
	if e := f.cache.get(q.key, now); e != nil {
		f.c.hits.Add(1)
		out, tc := appendEntry(out, in, q, e, limit, now)
		if tc {
			f.c.truncated.Add(1)
		}
		return out, false
	}
	f.c.misses.Add(1)
	return nil, true
}

// fit truncates a locally made answer that is over limit (only a long
// PTR target in a 512-byte answer can be).
func (f *Forwarder) fit(out, in []byte, q *query, limit int) []byte {
	if len(out) <= limit {
		return out
	}
	f.c.truncated.Add(1)
	ar := 0
	if q.edns {
		ar = 1
	}
	rcode := int(out[3] & 0xF)
	out = appendHeader(out[:0], q, rcode, true, true, 1, 0, 0, ar)
	out = append(out, in[headerLen:q.qEnd]...)
	if q.edns {
		out = appendOPT(out, rcode, q.do, false)
	}
	return out
}

// forward asks the upstreams and appends the answer to out: the
// upstream's answer (cached if it may be), SERVFAIL if none answered,
// REFUSED with EDE "Blocked" if rebind protection stopped it.
func (f *Forwarder) forward(out, in []byte, q *query, limit int) []byte {
	a, ok := f.resolve(in, q)
	if !ok {
		f.c.servFail.Add(1)
		return appendRcodeOnly(out, in, q, rcodeServerFailure, false, false)
	}
	if a.private && f.cfg.RebindProtection && !f.rebindAllowed(q.name()) {
		// dnsmasq logs "possible DNS-rebind attack" and strips the
		// records; current versions answer REFUSED with EDE 15 Blocked,
		// which tells the client why instead of a silent empty answer.
		f.c.rebind.Add(1)
		f.c.refused.Add(1)
		return appendRcodeOnly(out, in, q, rcodeRefused, false, true)
	}
	if a.ttl > 0 {
		f.cache.put(a.e)
	}
	out, tc := appendEntry(out, in, q, a.e, limit, a.e.stored)
	if tc {
		f.c.truncated.Add(1)
	}
	return out
}

func (f *Forwarder) rebindAllowed(name []byte) bool {
	for _, d := range f.rebindAllow {
		if hasSuffix(name, d) {
			return true
		}
	}
	return false
}

// resolve tries the upstreams in order until one answers with NOERROR
// or NXDOMAIN. A truncated UDP answer is retried over TCP to the same
// upstream; a timeout, SERVFAIL, REFUSED, NOTIMP, FORMERR or malformed
// answer moves on to the next.
func (f *Forwarder) resolve(in []byte, q *query) (upstreamAnswer, bool) {
	var ups []netip.AddrPort
	if f.cfg.Upstreams != nil {
		ups = f.cfg.Upstreams()
	}
	if len(ups) == 0 {
		return upstreamAnswer{}, false
	}
	// Our query: the client's question as spelled (keeping any 0x20
	// case randomisation), RD, the client's CD, our OPT with its DO.
	msg := make([]byte, 0, q.qEnd+optRRLen)
	msg = binary.BigEndian.AppendUint16(msg, 0)
	msg = binary.BigEndian.AppendUint16(msg, flagRD|q.flags&flagCD)
	msg = append(msg, 0, 1, 0, 0, 0, 0, 0, 1)
	msg = append(msg, in[headerLen:q.qEnd]...)
	msg = appendOPT(msg, 0, q.do, false)
	buf := make([]byte, udpReadSize)
	for _, up := range ups {
		// A fresh random ID per try (RFC 5452 §9.2); the source port is
		// the dialer's ephemeral one, new for every try.
		id := uint16(rand.Uint32())
		binary.BigEndian.PutUint16(msg, id)
		resp, err := f.exchange("udp", up, msg, id, q, buf)
		if err != nil {
			f.c.upErrors.Add(1)
			continue
		}
		a, err := parseAnswer(resp, q, f.cfg.Now())
		if err == nil && a.tc {
			resp, err = f.exchange("tcp", up, msg, id, q, nil)
			if err == nil {
				a, err = parseAnswer(resp, q, f.cfg.Now())
			}
			if err == nil && a.tc {
				err = errBadAnswer
			}
		}
		if err != nil {
			f.c.upErrors.Add(1)
			continue
		}
		switch a.rcode {
		case rcodeSuccess, rcodeNameError:
			return a, true
		}
		f.c.upErrors.Add(1)
	}
	return upstreamAnswer{}, false
}

// exchange sends msg to up and waits, for at most Timeout, for an answer
// that matches it. Over UDP, datagrams that do not match are counted and
// ignored, so a spoofed answer must arrive before the real one and guess
// the ID, port and question.
func (f *Forwarder) exchange(network string, up netip.AddrPort, msg []byte, id uint16, q *query, buf []byte) ([]byte, error) {
	f.c.upQueries.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), f.cfg.Timeout)
	defer cancel()
	conn, err := f.cfg.Dial(ctx, network, up.String())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if network == "tcp" {
		frame := make([]byte, 2, 2+len(msg))
		binary.BigEndian.PutUint16(frame, uint16(len(msg)))
		if _, err := conn.Write(append(frame, msg...)); err != nil {
			return nil, err
		}
		var l [2]byte
		if _, err := io.ReadFull(conn, l[:]); err != nil {
			return nil, err
		}
		resp := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(conn, resp); err != nil {
			return nil, err
		}
		if !matchAnswer(resp, id, q) {
			f.c.upMismatch.Add(1)
			return nil, errAnswerNotOurs
		}
		return resp, nil
	}
	if _, err := conn.Write(msg); err != nil {
		return nil, err
	}
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return nil, err
		}
		if matchAnswer(buf[:n], id, q) {
			return buf[:n], nil
		}
		f.c.upMismatch.Add(1)
	}
}

// addrPortConn is the allocation-free datagram API of *net.UDPConn.
type addrPortConn interface {
	ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// ServeUDP answers queries arriving on pc until pc is closed, then waits
// for its queries in flight and returns nil (or the read error, other
// than a timeout, that stopped it). One goroutine reads and answers cache hits and local
// names; each query for an upstream runs in its own goroutine, at most
// MaxInFlight at once.
func (f *Forwarder) ServeUDP(pc net.PacketConn) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	w := &worker{out: make([]byte, 0, ednsUDPSize)}
	buf := make([]byte, udpReadSize)
	apc, fast := pc.(addrPortConn)
	for {
		var (
			n    int
			ap   netip.AddrPort
			addr net.Addr
			err  error
		)
		if fast {
			n, ap, err = apc.ReadFromUDPAddrPort(buf)
		} else {
			n, addr, err = pc.ReadFrom(buf)
		}
		if err != nil {
			if closed(err) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		out, fwd := f.handle(w, buf[:n], 0)
		if fwd {
			select {
			case f.inFlight <- struct{}{}:
			default:
				f.c.drops.Add(1)
				continue
			}
			in := append([]byte(nil), buf[:n]...)
			q := w.q.clone()
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := f.forward(make([]byte, 0, ednsUDPSize), in, q, udpLimit(q))
				<-f.inFlight
				reply(pc, apc, fast, ap, addr, out)
			}()
			continue
		}
		if out != nil {
			reply(pc, apc, fast, ap, addr, out)
		}
	}
}

// closed says whether a read error means the connection was closed:
// net.ErrClosed from the host's sockets, io.EOF from gVisor's gonet
// (its UDPConn reports a closed endpoint so).
func closed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// reply sends an answer; a failed send is the client's loss, as with
// any datagram.
func reply(pc net.PacketConn, apc addrPortConn, fast bool, ap netip.AddrPort, addr net.Addr, out []byte) {
	if fast {
		apc.WriteToUDPAddrPort(out, ap)
		return
	}
	pc.WriteTo(out, addr)
}

// clone copies q for a goroutine, pointing the key at the copy's buffer.
func (q *query) clone() *query {
	c := new(query)
	*c = *q
	c.key = c.keyBuf[:len(q.key)]
	return c
}

// ServeTCP answers DNS over TCP (RFC 7766) on connections from l until
// Accept fails other than by a timeout, then closes the connections
// still open and returns: nil if Accept reported a closed listener
// (net.ErrClosed, io.EOF), else its error. (gVisor's gonet TCPListener
// reports its closing only as "endpoint is in invalid state"; that
// error is returned.)
// At most MaxTCPConns connections are open at once (a quarter of them
// from one address); a connection idle for TCPIdleTimeout is closed.
// Queries on one connection are answered in order.
func (f *Forwarder) ServeTCP(l net.Listener) error {
	ll, err := connlimit.New(l, connlimit.Config{
		Total:     f.cfg.MaxTCPConns,
		PerSource: max(1, f.cfg.MaxTCPConns/4),
	})
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.listeners = append(f.listeners, ll)
	f.mu.Unlock()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
	)
	defer func() {
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	for {
		c, err := ll.Accept()
		if err != nil {
			if closed(err) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.serveConn(c)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		}()
	}
}

func (f *Forwarder) serveConn(c net.Conn) {
	defer c.Close()
	w := &worker{out: make([]byte, 0, 512)}
	var (
		in    []byte
		frame []byte
		l     [2]byte
	)
	for {
		c.SetReadDeadline(time.Now().Add(f.cfg.TCPIdleTimeout))
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(l[:]))
		if cap(in) < n {
			in = make([]byte, n)
		}
		in = in[:n]
		if _, err := io.ReadFull(c, in); err != nil {
			return
		}
		out, fwd := f.handle(w, in, maxTCPMsg)
		if fwd {
			select {
			case f.inFlight <- struct{}{}:
				out = f.forward(w.out[:0], in, &w.q, maxTCPMsg)
				<-f.inFlight
			default:
				f.c.drops.Add(1)
				f.c.servFail.Add(1)
				out = appendRcodeOnly(w.out[:0], in, &w.q, rcodeServerFailure, false, false)
			}
		}
		if out == nil {
			continue
		}
		w.out = out[:0] // keep a grown buffer
		frame = binary.BigEndian.AppendUint16(frame[:0], uint16(len(out)))
		frame = append(frame, out...)
		c.SetWriteDeadline(time.Now().Add(f.cfg.TCPIdleTimeout))
		if _, err := c.Write(frame); err != nil {
			return
		}
	}
}
