package dhcpc

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Lease is what an ACK granted, with its times already made sane.
type Lease struct {
	Addr     netip.Prefix // the address and the subnet's prefix length
	Router   netip.Addr   // first router (option 3); invalid if none
	DNS      []netip.Addr // option 6
	Server   netip.Addr   // server identifier (option 54)
	Domain   string       // option 15
	MTU      int          // option 26; 0 if none or out of range
	Obtained time.Time    // when the request that got the lease was sent (RFC 2131 4.4.1)
	Duration time.Duration
	T1, T2   time.Duration // renewal and rebinding times, from Obtained
}

// Expires is when the lease ends unless renewed.
func (l Lease) Expires() time.Time { return l.Obtained.Add(l.Duration) }

// sameParameters reports whether l and o configure the interface the
// same way (only their times differ).
func (l Lease) sameParameters(o Lease) bool {
	return l.Addr == o.Addr && l.Router == o.Router && slices.Equal(l.DNS, o.DNS) &&
		l.Server == o.Server && l.Domain == o.Domain && l.MTU == o.MTU
}

const (
	// MinLease is the shortest lease the client believes. A server that
	// grants less (or zero, or omits option 51) gets this much, so the
	// client never renews in a tight loop. dnsmasq refuses to configure
	// less than two minutes; one is a margin below that.
	MinLease = time.Minute
	// infiniteLease is option 51's "infinite" value (RFC 2132 9.2).
	infiniteLease = math.MaxUint32 * time.Second
	// minMTU is the smallest interface MTU option 26 may carry (RFC 2132 5.1: 68).
	minMTU = 68
)

// leaseTimes returns the lease duration, T1 and T2 from a server's
// options, defaulting T1 and T2 to 0.5 and 0.875 of the lease (RFC 2131
// 4.4.5) and replacing values that break 0 < T1 < T2 < lease.
func leaseTimes(lease, t1, t2 time.Duration) (time.Duration, time.Duration, time.Duration) {
	if lease < MinLease {
		lease = MinLease
	}
	if t2 <= 0 || t2 >= lease {
		t2 = lease / 8 * 7 // divide first: an infinite lease would overflow
	}
	if t1 <= 0 || t1 >= t2 {
		t1 = lease / 2
		if t1 >= t2 { // a short T2 from the server: keep the default ratio
			t1 = t2 / 7 * 4
		}
	}
	return lease, t1, t2
}

var (
	errNoAddress  = errors.New("dhcpc: reply without a usable address (yiaddr)")
	errNoServerID = errors.New("dhcpc: reply without a server identifier (option 54)")
)

// leaseFromAck reads a lease from an ACK; obtained is when the request was sent.
func leaseFromAck(ack *dhcpv4.DHCPv4, obtained time.Time) (Lease, error) {
	addr, ok := netip.AddrFromSlice(ack.YourIPAddr.To4())
	if !ok || !addr.Is4() || addr.IsUnspecified() || addr.IsMulticast() || addr.IsLoopback() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return Lease{}, fmt.Errorf("%w: %v", errNoAddress, ack.YourIPAddr)
	}
	bits := classfulBits(addr)
	if m := ack.SubnetMask(); m != nil {
		if ones, size := m.Size(); size == 32 && ones > 0 {
			bits = ones
		}
	}
	server, ok := netip.AddrFromSlice(ack.ServerIdentifier().To4())
	if !ok || server.IsUnspecified() {
		return Lease{}, errNoServerID
	}
	l := Lease{
		Addr:     netip.PrefixFrom(addr, bits),
		Server:   server,
		Domain:   ack.DomainName(),
		Obtained: obtained,
	}
	for _, r := range ack.Router() {
		if a, ok := ip4(r); ok {
			l.Router = a
			break
		}
	}
	for _, d := range ack.DNS() {
		if a, ok := ip4(d); ok {
			l.DNS = append(l.DNS, a)
		}
	}
	if mtu, err := dhcpv4.GetUint16(dhcpv4.OptionInterfaceMTU, ack.Options); err == nil && mtu >= minMTU {
		l.MTU = int(mtu)
	}
	l.Duration, l.T1, l.T2 = leaseTimes(ack.IPAddressLeaseTime(0), ack.IPAddressRenewalTime(0), ack.IPAddressRebindingTime(0))
	return l, nil
}

func ip4(ip net.IP) (netip.Addr, bool) {
	a, ok := netip.AddrFromSlice(ip.To4())
	return a, ok && !a.IsUnspecified()
}

// classfulBits is the prefix length of addr's class, the mask a host
// assumes when the server sends none (RFC 1122 3.3.1.1 refers to RFC 950).
func classfulBits(a netip.Addr) int {
	b := a.As4()[0]
	switch {
	case b < 128:
		return 8
	case b < 192:
		return 16
	default:
		return 24
	}
}
