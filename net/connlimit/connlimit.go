// Package connlimit caps the connections a server holds open, in total
// and per source address. It wraps a net.Listener, so any of the
// router's TCP services (the status page; DNS over TCP and SSH later)
// gets the same protection: one LAN host, or a handful, cannot exhaust a
// small router's memory by opening connections and keeping them.
//
// A connection over a limit is closed as soon as it is accepted, before
// the server reads a byte from it, and counted. The client sees its
// connection closed (an EOF or a reset) and may retry once others have
// gone. Closing is the same for every protocol and costs the router
// nothing; an answer such as HTTP 503 would need a write to a client that
// may never read it.
//
// A connection holds its slots until the server closes it, so the limits
// only work beside timeouts that close idle and stalled connections.
package connlimit

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Config are the limits.
type Config struct {
	// Total is the most connections open at once.
	Total int
	// PerSource is the most connections open at once from one source
	// address (IPv4-mapped IPv6 addresses count as their IPv4 address).
	PerSource int
}

// Stats are a Listener's counters.
type Stats struct {
	Open              int    // connections accepted and not yet closed
	Accepted          uint64 // connections handed to the server
	RejectedTotal     uint64 // closed at once: Total connections were open
	RejectedPerSource uint64 // closed at once: PerSource were open from its address
}

// Rejected is the number of connections closed for either limit.
func (s Stats) Rejected() uint64 { return s.RejectedTotal + s.RejectedPerSource }

// ErrConfig reports limits that are not positive.
var ErrConfig = errors.New("connlimit: limits must be positive")

// Listener is a net.Listener that enforces a Config.
type Listener struct {
	net.Listener
	cfg Config

	mu    sync.Mutex
	open  int
	bySrc map[netip.Addr]int // only sources with open connections

	accepted, rejTotal, rejSource atomic.Uint64
}

// New wraps ln.
func New(ln net.Listener, cfg Config) (*Listener, error) {
	if cfg.Total <= 0 || cfg.PerSource <= 0 {
		return nil, ErrConfig
	}
	return &Listener{Listener: ln, cfg: cfg, bySrc: map[netip.Addr]int{}}, nil
}

// Accept returns the next connection within the limits; connections over
// them are closed and counted on the way. Errors are ln's.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := source(c.RemoteAddr())
		if l.take(src) {
			l.accepted.Add(1)
			return &conn{Conn: c, l: l, src: src}, nil
		}
		_ = c.Close()
	}
}

// take reserves a slot for a connection from src, or counts the refusal.
func (l *Listener) take(src netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open >= l.cfg.Total {
		l.rejTotal.Add(1)
		return false
	}
	if l.bySrc[src] >= l.cfg.PerSource {
		l.rejSource.Add(1)
		return false
	}
	l.open++
	l.bySrc[src]++
	return true
}

func (l *Listener) release(src netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if n := l.bySrc[src] - 1; n > 0 {
		l.bySrc[src] = n
	} else {
		delete(l.bySrc, src)
	}
}

// Stats returns the counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	open := l.open
	l.mu.Unlock()
	return Stats{Open: open, Accepted: l.accepted.Load(),
		RejectedTotal: l.rejTotal.Load(), RejectedPerSource: l.rejSource.Load()}
}

// source is the address part of a connection's remote address. Addresses
// it cannot read (none, or of an unknown kind) all share the zero Addr,
// so they are limited together rather than not at all.
func source(a net.Addr) netip.Addr {
	switch a := a.(type) {
	case *net.TCPAddr:
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			return ip.Unmap()
		}
	case nil:
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return ap.Addr().Unmap()
		}
	}
	return netip.Addr{}
}

// conn gives its slots back when it is first closed.
type conn struct {
	net.Conn
	l    *Listener
	src  netip.Addr
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.src) })
	return err
}

// CloseWrite shuts the sending side down when the connection can (a
// server's graceful close looks for it).
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
