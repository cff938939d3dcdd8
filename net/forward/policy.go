package forward

import (
	"github.com/gowrt/gowrt/net/firewall"
	"github.com/gowrt/gowrt/net/nat"
)

// policy is the slow path: the connection tracker asks it about the
// first packet of every connection (and about every packet for the router
// that belongs to none). It routes the packet and applies the firewall in
// fw4's order: port forwards (DNAT, prerouting), then the input chain for
// the router's own addresses or the forward chain for the rest, then
// masquerading and MSS clamping for the egress zone (postrouting).
type policy struct{ f *Forwarder }

// ipv4MSSOverhead is the IPv4 and TCP headers without options (RFC 9293
// 3.7.1: MSS = MTU - 40 for IPv4).
const ipv4MSSOverhead = 40

func (p policy) Decide(r *nat.Request) nat.Decision {
	f := p.f
	in := f.iface(r.In)
	if in == nil {
		return nat.Decision{Action: nat.Drop}
	}
	rules := f.rules.Load()
	pk := firewall.Packet{
		In: uint8(r.In), Proto: uint8(r.Proto),
		Src: r.Src.Addr(), Dst: r.Dst.Addr(), SrcPort: r.Src.Port(), DstPort: r.Dst.Port(),
		ICMPType: r.ICMPType, ICMPCode: r.ICMPCode,
	}
	dst := r.Dst.Addr()
	var d nat.Decision
	if a := in.prefix(); a.IsValid() && dst == a.Addr() {
		if to, ok := rules.Redirect(&pk); ok {
			d.DNAT = to
			dst = to.Addr()
			pk.DNAT = true
		}
	}
	if !d.DNAT.IsValid() && f.isLocal(dst) {
		d.Action = verdict(rules.Input(&pk))
		if d.Action == nat.Forward {
			d.Action = nat.Local
		}
		if d.Action != nat.Local {
			f.Stats.InputDrop.Add(1)
		}
		return d
	}
	out, _ := f.route(dst)
	if out == nil || !out.up() {
		f.Stats.NoRoute.Add(1)
		return nat.Decision{Action: nat.Drop}
	}
	pk.Out = uint8(out.id)
	// The forward chain accepts port-forwarded traffic by its DNAT
	// mark (fw4's ct status dnat accept); the rest meets its rules.
	if a := verdict(rules.Forward(&pk)); a != nat.Forward {
		return nat.Decision{Action: a}
	}
	d.Action, d.Out = nat.Forward, out.id
	if rules.Masquerade(uint8(out.id)) {
		a := out.prefix()
		if !a.IsValid() {
			f.Stats.NoRoute.Add(1)
			return nat.Decision{Action: nat.Drop}
		}
		d.SNAT = a.Addr()
	}
	if rules.MSSClamp(uint8(out.id)) || rules.MSSClamp(uint8(in.id)) {
		d.MSS = uint16(min(in.mtu, out.mtu) - ipv4MSSOverhead)
	}
	return d
}

// verdict maps a firewall target onto the tracker's action, Forward
// standing for "accepted".
func verdict(t firewall.Target) nat.Action {
	switch t {
	case firewall.Accept:
		return nat.Forward
	case firewall.Reject:
		return nat.Reject
	default:
		return nat.Drop
	}
}
