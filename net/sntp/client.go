package sntp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

// DefaultServers are OpenWrt's default time servers (its
// package/utils/busybox/files/sysntpd and system config defaults).
var DefaultServers = []string{"0.openwrt.pool.ntp.org", "1.openwrt.pool.ntp.org",
	"2.openwrt.pool.ntp.org", "3.openwrt.pool.ntp.org"}

// Port is the NTP port (RFC 5905 §7.2: 123).
const Port = 123

// Defaults of Config.
const (
	// DefaultMinPoll and DefaultMaxPoll bound the poll interval: RFC 5905
	// §7.3 MINPOLL 6 (64 s) and the default MAXPOLL 10 (1024 s); the
	// interval doubles after each good sync.
	DefaultMinPoll = 64 * time.Second
	DefaultMaxPoll = 1024 * time.Second
	// DefaultTimeout bounds one exchange (and one name lookup). Pool
	// servers answer in well under a second; RFC 4330 §10 asks for at
	// least a second before retrying.
	DefaultTimeout = 3 * time.Second
	// DefaultMaxQueries is how many server addresses one Sync asks.
	DefaultMaxQueries = 4
	// StepThreshold: an offset larger than this is stepped, a smaller one
	// slewed (ntpd's step threshold, 128 ms; RFC 5905 §11.3 STEPT 0.125 s
	// is the same idea).
	StepThreshold = 128 * time.Millisecond
	// firstRetry and maxRetry bound the backoff after a failed sync.
	firstRetry = 2 * time.Second
	maxRetry   = DefaultMinPoll
	// rateBackoff is how long a server that sent RATE is left alone at
	// first; it doubles with each RATE, up to maxRateBackoff.
	rateBackoff    = 2 * DefaultMinPoll
	maxRateBackoff = 36 * time.Hour
	// maxReply is how much of a reply is read: the header plus room for
	// extension fields and a MAC, which are ignored.
	maxReply = 1024
)

// Clock is the clock the client reads and sets (sys/clock.System
// implements it).
type Clock interface {
	Now() time.Time
	Step(to time.Time) error
	Slew(offset time.Duration) error
	Synced() bool
}

// Config configures a Client. Only Clock is required.
type Config struct {
	// Servers are host names or addresses, each optionally with ":port".
	Servers []string
	// Resolve looks a host name up (the router's DNS forwarder);
	// nil uses net.DefaultResolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial opens a UDP socket to addr (the router's gVisor stack); nil
	// uses net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Clock is read for the timestamps and set from the result.
	Clock Clock
	// MinPoll and MaxPoll bound the interval between syncs.
	MinPoll, MaxPoll time.Duration
	// Timeout bounds one exchange and one name lookup.
	Timeout time.Duration
	// MaxQueries is how many addresses one Sync asks at once.
	MaxQueries int
	// Synced, if set, receives a TimeSynced after each applied sync.
	Synced *event.Topic[event.TimeSynced]
	// Logf, if set, reports failed syncs.
	Logf func(format string, args ...any)
}

// Stats are the client's counters.
type Stats struct {
	Queries         uint64 // requests sent
	Replies         uint64 // usable replies
	Timeouts        uint64 // exchanges that got no usable reply in time
	Spoofed         uint64 // replies not echoing our transmit timestamp, dropped
	Invalid         uint64 // replies failing another check
	Kisses          uint64 // kiss-o'-death replies
	Syncs           uint64 // syncs applied
	Steps           uint64 // of which stepped
	Failures        uint64 // syncs that found no usable reply
	ResolveFailures uint64
}

// Client is an SNTP client. Its methods are safe for concurrent use.
type Client struct {
	cfg Config

	mu     sync.Mutex
	banned map[netip.AddrPort]bool      // DENY/RSTR: never asked again
	rate   map[netip.AddrPort]rateState // RATE: left alone until
	next   int                          // first server of the next Sync (rotation)

	queries, replies, timeouts, spoofed, invalid, kisses atomic.Uint64
	syncs, steps, failures, resolveFailures              atomic.Uint64
}

type rateState struct {
	until   time.Time
	backoff time.Duration
}

// New returns a client for cfg with defaults filled in.
func New(cfg Config) (*Client, error) {
	if cfg.Clock == nil {
		return nil, errors.New("sntp: Config.Clock is nil")
	}
	if len(cfg.Servers) == 0 {
		cfg.Servers = DefaultServers
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	if cfg.MinPoll <= 0 {
		cfg.MinPoll = DefaultMinPoll
	}
	if cfg.MaxPoll < cfg.MinPoll {
		cfg.MaxPoll = max(DefaultMaxPoll, cfg.MinPoll)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxQueries <= 0 {
		cfg.MaxQueries = DefaultMaxQueries
	}
	for _, s := range cfg.Servers {
		if _, _, err := splitServer(s); err != nil {
			return nil, err
		}
	}
	return &Client{cfg: cfg, banned: map[netip.AddrPort]bool{}, rate: map[netip.AddrPort]rateState{}}, nil
}

// Stats returns the client's counters.
func (c *Client) Stats() Stats {
	return Stats{
		Queries: c.queries.Load(), Replies: c.replies.Load(), Timeouts: c.timeouts.Load(),
		Spoofed: c.spoofed.Load(), Invalid: c.invalid.Load(), Kisses: c.kisses.Load(),
		Syncs: c.syncs.Load(), Steps: c.steps.Load(), Failures: c.failures.Load(),
		ResolveFailures: c.resolveFailures.Load(),
	}
}

// splitServer returns a server's host and port.
func splitServer(s string) (host string, port uint16, err error) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		// No port (or a bare IPv6 address).
		if s == "" {
			return "", 0, errors.New("sntp: empty server name")
		}
		return s, Port, nil
	}
	p, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || p == 0 || host == "" {
		return "", 0, fmt.Errorf("sntp: bad server %q", s)
	}
	return host, uint16(p), nil
}

// Result is one sync: the best sample and what was done with it.
type Result struct {
	Server  string         // as configured
	Addr    netip.AddrPort // who answered
	Sample                 // timestamps, offset, delay
	Stepped bool           // the clock was stepped (else slewed)
}

// Query does one exchange with addr and returns the sample, or why the
// reply was not usable (a *KissError for a kiss-o'-death). It does not
// set the clock.
func (c *Client) Query(ctx context.Context, addr netip.AddrPort) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	conn, err := c.cfg.Dial(ctx, "udp", addr.String())
	if err != nil {
		return Sample{}, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	// The transmit timestamp is random rather than our clock (as chrony
	// does): it is all an off-path attacker would have to guess to forge
	// a reply, and it does not tell the network what our clock says.
	// T1 is kept locally.
	sent := Timestamp(rand.Uint64())
	req := Packet{Version: Version, Mode: ModeClient, Transmit: sent}
	var buf [maxReply]byte
	req.Encode(buf[:])
	t1 := c.cfg.Clock.Now()
	if _, err := conn.Write(buf[:PacketLen]); err != nil {
		return Sample{}, err
	}
	c.queries.Add(1)
	var lastErr error
	for {
		n, err := conn.Read(buf[:])
		t4 := c.cfg.Clock.Now()
		if err != nil {
			c.timeouts.Add(1)
			if lastErr != nil {
				return Sample{}, fmt.Errorf("%w (and no valid reply: %v)", lastErr, err)
			}
			return Sample{}, err
		}
		p, err := Decode(buf[:n])
		if err == nil {
			err = Validate(&p, sent)
		}
		var kod *KissError
		switch {
		case err == nil:
			c.replies.Add(1)
			s := Sample{T1: t1, T2: p.Receive.Time(), T3: p.Transmit.Time(), T4: t4, Stratum: p.Stratum,
				RootDelay: shortDuration(p.RootDelay), RootDispersion: shortDuration(p.RootDispersion)}
			s.Compute()
			return s, nil
		case errors.Is(err, ErrSpoofed):
			// Not an answer to this request: keep waiting for the real
			// one until the deadline, so a forger cannot cut the
			// exchange short.
			c.spoofed.Add(1)
			lastErr = err
			continue
		case errors.Is(err, ErrNotServer), errors.Is(err, ErrShort):
			c.invalid.Add(1) // not a server reply at all: wait on
			lastErr = err
			continue
		case errors.As(err, &kod):
			c.kisses.Add(1)
			c.kissed(addr, kod)
			return Sample{}, err
		default:
			c.invalid.Add(1)
			return Sample{}, err
		}
	}
}

// kissed records what a kiss-o'-death asks of us.
func (c *Client) kissed(a netip.AddrPort, k *KissError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case k.Stop():
		c.banned[a] = true
	case k.RateLimit():
		r := c.rate[a]
		r.backoff = min(max(rateBackoff, 2*r.backoff), maxRateBackoff)
		r.until = time.Now().Add(r.backoff)
		c.rate[a] = r
	}
}

// usable reports whether a may be asked now.
func (c *Client) usable(a netip.AddrPort, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.banned[a] && !now.Before(c.rate[a].until)
}

type target struct {
	server string
	addr   netip.AddrPort
}

// ErrNoServers: every configured server failed to resolve or has been
// stopped or rate-limited by a kiss-o'-death.
var ErrNoServers = errors.New("sntp: no server to ask")

// targets resolves the servers and picks up to MaxQueries addresses,
// taking one address from each server in turn so one name cannot take
// every slot.
func (c *Client) targets(ctx context.Context) ([]target, error) {
	n := len(c.cfg.Servers)
	c.mu.Lock()
	first := c.next
	c.next = (c.next + 1) % n
	c.mu.Unlock()

	lists := make([][]target, n)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	for i := range n {
		server := c.cfg.Servers[(first+i)%n]
		host, port, _ := splitServer(server)
		if a, err := netip.ParseAddr(host); err == nil {
			lists[i] = []target{{server, netip.AddrPortFrom(a.Unmap(), port)}}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
			defer cancel()
			addrs, err := c.cfg.Resolve(rctx, host)
			if err != nil {
				c.resolveFailures.Add(1)
				errMu.Lock()
				errs = append(errs, fmt.Errorf("sntp: resolving %s: %w", host, err))
				errMu.Unlock()
				return
			}
			for _, a := range addrs {
				lists[i] = append(lists[i], target{server, netip.AddrPortFrom(a.Unmap(), port)})
			}
		}()
	}
	wg.Wait()

	now := time.Now()
	seen := map[netip.AddrPort]bool{}
	var out []target
	for round := 0; len(out) < c.cfg.MaxQueries; round++ {
		more := false
		for _, l := range lists {
			if round >= len(l) {
				continue
			}
			more = true
			t := l[round]
			if seen[t.addr] || !c.usable(t.addr, now) || len(out) == c.cfg.MaxQueries {
				continue
			}
			seen[t.addr] = true
			out = append(out, t)
		}
		if !more {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.Join(append([]error{ErrNoServers}, errs...)...)
	}
	return out, nil
}

// Sync asks up to MaxQueries server addresses at once, takes the valid
// sample with the lowest delay, and applies it: the clock is stepped if it
// was never set or is off by more than StepThreshold, slewed otherwise.
// It publishes a TimeSynced on Config.Synced.
func (c *Client) Sync(ctx context.Context) (Result, error) {
	ts, err := c.targets(ctx)
	if err != nil {
		c.failures.Add(1)
		return Result{}, err
	}
	type answer struct {
		Sample
		err error
	}
	answers := make([]answer, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.Query(ctx, t.addr)
			answers[i] = answer{s, err}
		}()
	}
	wg.Wait()
	best := -1
	var errs []error
	for i, a := range answers {
		if a.err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", ts[i].server, ts[i].addr, a.err))
			continue
		}
		if best < 0 || a.Delay < answers[best].Delay {
			best = i
		}
	}
	if best < 0 {
		c.failures.Add(1)
		return Result{}, errors.Join(errs...)
	}
	r := Result{Server: ts[best].server, Addr: ts[best].addr, Sample: answers[best].Sample}
	if err := c.apply(&r); err != nil {
		c.failures.Add(1)
		return r, err
	}
	return r, nil
}

func (c *Client) apply(r *Result) error {
	clk := c.cfg.Clock
	off := r.Offset
	if !clk.Synced() || off > StepThreshold || off < -StepThreshold {
		if err := clk.Step(clk.Now().Add(off)); err != nil {
			return fmt.Errorf("sntp: stepping the clock: %w", err)
		}
		r.Stepped = true
		c.steps.Add(1)
	} else if err := clk.Slew(off); err != nil {
		return fmt.Errorf("sntp: slewing the clock: %w", err)
	}
	c.syncs.Add(1)
	if c.cfg.Synced != nil {
		c.cfg.Synced.Publish(event.TimeSynced{Step: off, Stepped: r.Stepped, Server: r.Server})
	}
	return nil
}

// Run keeps the clock synced while the WAN is up, until ctx ends or wan
// is closed: it syncs at once when the WAN comes up, then every poll
// interval (MinPoll, doubling after each good sync up to MaxPoll, back to
// MinPoll after a step); after a failed sync it retries after 2 s,
// doubling up to MinPoll, each wait shortened by a random quarter at most
// so routers rebooted together do not poll in step. wan is a WAN state
// subscription (event.Bus.WAN).
func (c *Client) Run(ctx context.Context, wan <-chan event.WAN) error {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	up := false
	poll, retry := c.cfg.MinPoll, firstRetry
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case w, ok := <-wan:
			if !ok {
				return nil
			}
			if w.Up && !up {
				poll, retry = c.cfg.MinPoll, firstRetry
				timer.Reset(0)
			} else if !w.Up {
				timer.Stop()
			}
			up = w.Up
		case <-timer.C:
			if !up {
				continue
			}
			r, err := c.Sync(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if c.cfg.Logf != nil {
					c.cfg.Logf("sntp: sync failed, retrying in %v: %v", retry, err)
				}
				timer.Reset(jitter(retry))
				retry = min(2*retry, maxRetry)
				continue
			}
			retry = firstRetry
			if r.Stepped {
				poll = c.cfg.MinPoll
			}
			timer.Reset(jitter(poll))
			poll = min(2*poll, c.cfg.MaxPoll)
		}
	}
}

// jitter returns d shortened by up to a quarter, at random.
func jitter(d time.Duration) time.Duration {
	if d < 4 {
		return d
	}
	return d - rand.N(d/4)
}
