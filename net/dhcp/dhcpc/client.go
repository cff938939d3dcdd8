// Package dhcpc is the router's DHCPv4 client for its WAN port (RFC 2131):
// it obtains a lease, renews it at T1 by unicast to the server, rebinds at
// T2 by broadcast, gives it up when it expires and releases it when
// stopped. Messages are built and parsed by github.com/insomniacslk/dhcp
// (dhcpv4), and exchanges (transaction IDs, retransmission) run through its
// nclient4.Client; this package is the state machine around them.
//
// The network is whatever net.PacketConn the caller gives, typically an
// ethudp.Conn that speaks UDP in raw Ethernet frames, since the client
// must talk before its interface has an address.
package dhcpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
)

// Defaults (RFC 2131 4.1: retransmission starts near 4 s and doubles up
// to 64 s, randomized by ±1 s; RFC 2131 4.4.5: renewal retries wait half
// the remaining time, at least 60 s).
const (
	DefaultTimeout       = 4 * time.Second
	DefaultRetries       = 4 // transmissions per exchange: 4+8+16+32 s ≈ one minute
	DefaultBackoffMin    = 4 * time.Second
	DefaultBackoffMax    = 64 * time.Second
	DefaultRenewRetryMin = 60 * time.Second
	backoffJitter        = time.Second

	serverPort = 67
)

// EventKind says what happened to the lease.
type EventKind int

const (
	// Bound: a new lease after INIT (first one, or after losing one).
	Bound EventKind = iota + 1
	// Renewed: the lease was extended with the same parameters.
	Renewed
	// Changed: a renewal or rebinding granted different parameters
	// (address, router, DNS, domain, MTU or server). Old holds the previous.
	Changed
	// Lost: the lease expired without renewal, or the server refused it
	// (DHCPNAK). The address must no longer be used; the client is back
	// in INIT.
	Lost
	// Released: the client was stopped while bound and sent DHCPRELEASE.
	Released
)

func (k EventKind) String() string {
	switch k {
	case Bound:
		return "bound"
	case Renewed:
		return "renewed"
	case Changed:
		return "changed"
	case Lost:
		return "lost"
	case Released:
		return "released"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event reports a lease change.
type Event struct {
	Kind  EventKind
	Lease Lease  // the current lease (for Lost and Released: the one given up)
	Old   *Lease // the previous lease, for Bound after Lost and for Changed
}

// Config configures a Client.
type Config struct {
	HWAddr   net.HardwareAddr // the WAN port's MAC (chaddr)
	Hostname string           // option 12, if not empty
	ClientID []byte           // option 61, if not empty
	// Conn carries the client's UDP port 68. Run uses it exclusively and
	// does not close it; it must support SetReadDeadline (Run unblocks its
	// reader with a deadline in the past when it returns). If it has a
	// method SetAddr(netip.Addr) (as ethudp.Conn does), Run sets the
	// leased address there when bound and 0.0.0.0 when the lease ends.
	Conn net.PacketConn
	// Now and After measure the lease times (T1, T2, expiry) and the
	// backoff between failed rounds. Defaults: time.Now and time.After.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// Timeout is the first retransmission timeout of an exchange, doubled
	// for each of Retries transmissions.
	Timeout time.Duration
	Retries int
	// BackoffMin doubles up to BackoffMax (each ±1 s) between failed
	// rounds of DISCOVER/REQUEST, so a missing ISP does not make the
	// client spin.
	BackoffMin, BackoffMax time.Duration
	// RenewRetryMin is the shortest wait between renewal (or rebinding)
	// attempts.
	RenewRetryMin time.Duration
	// Logf, if set, receives one line per failed exchange.
	Logf func(format string, args ...any)
}

// Client is a DHCPv4 client. Make it with New and run it with Run.
type Client struct {
	cfg Config
}

// New checks cfg and fills in defaults.
func New(cfg Config) (*Client, error) {
	if len(cfg.HWAddr) != 6 {
		return nil, fmt.Errorf("dhcpc: HWAddr %v is not an Ethernet address", cfg.HWAddr)
	}
	if cfg.Conn == nil {
		return nil, errors.New("dhcpc: no Conn")
	}
	if len(cfg.ClientID) > 255 || len(cfg.Hostname) > 255 {
		return nil, errors.New("dhcpc: ClientID or Hostname longer than a DHCP option (255 bytes)")
	}
	if cfg.ClientID != nil && len(cfg.ClientID) < 2 {
		return nil, errors.New("dhcpc: ClientID shorter than 2 bytes (RFC 2132 9.14)")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Retries <= 0 {
		cfg.Retries = DefaultRetries
	}
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = DefaultBackoffMin
	}
	if cfg.BackoffMax < cfg.BackoffMin {
		cfg.BackoffMax = max(DefaultBackoffMax, cfg.BackoffMin)
	}
	if cfg.RenewRetryMin <= 0 {
		cfg.RenewRetryMin = DefaultRenewRetryMin
	}
	return &Client{cfg: cfg}, nil
}

// binding is a lease with the ACK it came from (renewals are built from it).
type binding struct {
	lease Lease
	ack   *dhcpv4.DHCPv4
}

// Run runs the client until ctx is cancelled: INIT → SELECTING →
// REQUESTING → BOUND → RENEWING (at T1, unicast) → REBINDING (at T2,
// broadcast) → expiry (Lost, back to INIT). A DHCPNAK restarts at INIT.
// When ctx is cancelled while bound, Run sends DHCPRELEASE and reports
// Released before returning ctx.Err().
//
// events is called synchronously from Run's goroutine, in order; the
// client does nothing else until it returns, so it must not block for
// long (configuring the interface is fine). It may be nil.
func (c *Client) Run(ctx context.Context, events func(Event)) error {
	if events == nil {
		events = func(Event) {}
	}
	if err := c.cfg.Conn.SetReadDeadline(time.Time{}); err != nil {
		return fmt.Errorf("dhcpc: conn: %w", err)
	}
	nc, err := nclient4.NewWithConn(keepOpen{c.cfg.Conn}, c.cfg.HWAddr,
		nclient4.WithTimeout(c.cfg.Timeout), nclient4.WithRetry(c.cfg.Retries))
	if err != nil {
		return fmt.Errorf("dhcpc: %w", err)
	}
	defer nc.Close()

	var last *Lease
	failures := 0
	for {
		b, err := c.acquire(ctx, nc, last)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			failures++
			c.logf("dhcpc: no lease (round %d): %v", failures, err)
			if !c.sleep(ctx, c.backoff(failures)) {
				return ctx.Err()
			}
			continue
		}
		failures = 0
		c.setAddr(b.lease.Addr.Addr())
		events(Event{Kind: Bound, Lease: b.lease, Old: last})
		lost := c.hold(ctx, nc, b, events)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = &lost
	}
}

// backoff is the wait after the n-th failed round: BackoffMin doubled
// n-1 times, capped at BackoffMax, ±1 s.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.BackoffMin
	for i := 1; i < n && d < c.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, c.cfg.BackoffMax)
	return d + rand.N(2*backoffJitter+1) - backoffJitter
}

// modifiers are the options every request carries.
func (c *Client) modifiers() []dhcpv4.Modifier {
	m := []dhcpv4.Modifier{
		dhcpv4.WithRequestedOptions(
			dhcpv4.OptionSubnetMask, dhcpv4.OptionRouter, dhcpv4.OptionDomainNameServer,
			dhcpv4.OptionDomainName, dhcpv4.OptionInterfaceMTU, dhcpv4.OptionIPAddressLeaseTime,
			dhcpv4.OptionRenewTimeValue, dhcpv4.OptionRebindingTimeValue),
	}
	if c.cfg.Hostname != "" {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptHostName(c.cfg.Hostname)))
	}
	if len(c.cfg.ClientID) > 0 {
		m = append(m, dhcpv4.WithOption(dhcpv4.OptClientIdentifier(c.cfg.ClientID)))
	}
	return m
}

// acquire runs one DISCOVER/OFFER/REQUEST/ACK round, asking for the last
// lease's address again (RFC 2131 4.4.1 allows option 50 in DISCOVER).
func (c *Client) acquire(ctx context.Context, nc *nclient4.Client, last *Lease) (*binding, error) {
	mods := c.modifiers()
	discover := mods
	if last != nil {
		discover = append(discover[:len(discover):len(discover)],
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(last.Addr.Addr().AsSlice())))
	}
	offer, err := nc.DiscoverOffer(ctx, discover...)
	if err != nil {
		return nil, err
	}
	if offer.ServerIdentifier() == nil {
		return nil, errNoServerID
	}
	sent := c.cfg.Now()
	l, err := nc.RequestFromOffer(ctx, offer, mods...)
	if err != nil {
		return nil, err
	}
	lease, err := leaseFromAck(l.ACK, sent)
	if err != nil {
		return nil, err
	}
	return &binding{lease: lease, ack: l.ACK}, nil
}

var (
	errNak     = errors.New("dhcpc: server sent DHCPNAK")
	errTimeout = errors.New("dhcpc: no answer before the deadline")
)

// hold keeps b until it is lost (returned) or ctx is cancelled (then it
// releases b). It reports every renewal through events.
func (c *Client) hold(ctx context.Context, nc *nclient4.Client, b *binding, events func(Event)) Lease {
	for {
		l := b.lease
		if !c.sleepUntil(ctx, l.Obtained.Add(l.T1)) {
			c.release(nc, b, events)
			return l
		}
		server := &net.UDPAddr{IP: l.Server.AsSlice(), Port: serverPort}
		nb, err := c.extend(ctx, nc, b, server, l.Obtained.Add(l.T2))
		if errors.Is(err, errTimeout) {
			nb, err = c.extend(ctx, nc, b, &net.UDPAddr{IP: net.IPv4bcast, Port: serverPort}, l.Expires())
		}
		if ctx.Err() != nil {
			c.release(nc, b, events)
			return l
		}
		if err != nil { // NAK, or expiry
			c.logf("dhcpc: lease %v lost: %v", l.Addr, err)
			c.setAddr(netip.IPv4Unspecified())
			events(Event{Kind: Lost, Lease: l})
			return l
		}
		kind := Renewed
		if !nb.lease.sameParameters(l) {
			kind = Changed
			c.setAddr(nb.lease.Addr.Addr())
		}
		old := l
		events(Event{Kind: kind, Lease: nb.lease, Old: &old})
		b = nb
	}
}

// extend sends renewal requests (RENEWING when dest is the server,
// REBINDING when it is broadcast) until one is answered or until passes.
// Between attempts it waits half the remaining time, at least
// RenewRetryMin (RFC 2131 4.4.5).
func (c *Client) extend(ctx context.Context, nc *nclient4.Client, b *binding, dest *net.UDPAddr, until time.Time) (*binding, error) {
	rebinding := dest.IP.Equal(net.IPv4bcast)
	for {
		now := c.cfg.Now()
		if !now.Before(until) {
			return nil, errTimeout
		}
		// RFC 2131 4.3.2 / table 5: ciaddr set, no server identifier, no
		// requested address; unicast when renewing, broadcast when rebinding.
		req, err := dhcpv4.NewRenewFromAck(b.ack, c.modifiers()...)
		if err != nil {
			return nil, err
		}
		match := nclient4.IsMessageType(dhcpv4.MessageTypeAck, dhcpv4.MessageTypeNak)
		if !rebinding {
			match = nclient4.IsAll(match, nclient4.IsCorrectServer(b.lease.Server.AsSlice()))
		}
		actx, cancel := c.withDeadline(ctx, until)
		resp, err := nc.SendAndRead(actx, dest, req, match)
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			if resp.MessageType() == dhcpv4.MessageTypeNak {
				return nil, errNak
			}
			lease, err := leaseFromAck(resp, now)
			if err == nil {
				return &binding{lease: lease, ack: resp}, nil
			}
			c.logf("dhcpc: unusable ACK: %v", err)
		} else {
			c.logf("dhcpc: %s %v: %v", map[bool]string{false: "renewing", true: "rebinding"}[rebinding], dest, err)
		}
		now = c.cfg.Now()
		wait := min(max(until.Sub(now)/2, c.cfg.RenewRetryMin), until.Sub(now))
		if !c.sleepUntil(ctx, now.Add(wait)) {
			return nil, ctx.Err()
		}
	}
}

// release sends DHCPRELEASE for b (RFC 2131 4.4.6: unicast to the server,
// no retransmission) and reports it.
func (c *Client) release(nc *nclient4.Client, b *binding, events func(Event)) {
	var mods []dhcpv4.Modifier
	if len(c.cfg.ClientID) > 0 {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClientIdentifier(c.cfg.ClientID)))
	}
	if err := nc.Release(&nclient4.Lease{ACK: b.ack}, mods...); err != nil {
		c.logf("dhcpc: release: %v", err)
	}
	c.setAddr(netip.IPv4Unspecified())
	events(Event{Kind: Released, Lease: b.lease})
}

func (c *Client) setAddr(a netip.Addr) {
	if s, ok := c.cfg.Conn.(interface{ SetAddr(netip.Addr) }); ok {
		s.SetAddr(a)
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

// sleep waits d on the configured clock; false if ctx ended first.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-c.cfg.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// sleepUntil waits until t on the configured clock. The clock is read
// again after each wake so a clock that jumps is followed.
func (c *Client) sleepUntil(ctx context.Context, t time.Time) bool {
	for {
		d := t.Sub(c.cfg.Now())
		if d <= 0 {
			return ctx.Err() == nil
		}
		if !c.sleep(ctx, d) {
			return false
		}
	}
}

// withDeadline is context.WithDeadline on the configured clock.
func (c *Client) withDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancel(ctx)
	go func() {
		if c.sleepUntil(actx, t) {
			cancel()
		}
	}()
	return actx, cancel
}

// keepOpen hands nclient4 the caller's conn without letting it close it:
// nclient4.Client.Close closes its conn to stop its reader; a read
// deadline in the past stops the reader just as well.
type keepOpen struct{ net.PacketConn }

func (k keepOpen) Close() error { return k.PacketConn.SetReadDeadline(time.Unix(1, 0)) }
