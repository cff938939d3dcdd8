package firmware

import (
	"context"
	"io"
	"net/netip"
	"runtime"
	"time"

	"github.com/gowrt/gowrt/kernel"
	"github.com/gowrt/gowrt/mgmt/shell"
	"github.com/gowrt/gowrt/net/nat"
)

// host is what the shell sees of the firmware (shell.Host).
type host struct{ f *Firmware }

var _ shell.Host = host{}

func (h host) Info() shell.Info {
	f := h.f
	in := shell.Info{Board: f.opts.Board.Name(), Version: f.opts.Version, Hostname: f.running().System.Hostname,
		Uptime: time.Since(f.started)}
	m := memory()
	in.MemTotal, in.MemUsed = m.total, m.used
	in.Busy = f.busy()
	return in
}

// mem is the device's memory use: the kernel's frames on bare metal, the
// Go runtime's view elsewhere (total unknown).
type mem struct{ total, used, goHeap uint64 }

func memory() mem {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := mem{used: ms.Sys - ms.HeapReleased, goHeap: ms.HeapInuse}
	if ki, err := kernel.ReadInfo(); err == nil {
		m.total, m.used = uint64(ki.RAM), uint64(ki.RAMUsed)
	}
	return m
}

// busy is the CPU's busy fraction since the previous call (at least a
// second apart; bare metal only: the kernel counts its idle time).
func (f *Firmware) busy() float64 {
	ki, err := kernel.ReadInfo()
	if err != nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	du, di := ki.Uptime-f.lastUptime, ki.Idle-f.lastIdle
	if du < uint64(time.Second) {
		return f.lastBusy
	}
	f.lastUptime, f.lastIdle = ki.Uptime, ki.Idle
	if di > du {
		di = du
	}
	f.lastBusy = float64(du-di) / float64(du)
	return f.lastBusy
}

func (h host) Interfaces() []shell.Iface {
	r := h.f.Router
	st := r.Status()
	lan := shell.Iface{Name: "br-lan", MAC: st.BridgeMAC, Addrs: []netip.Prefix{r.LANAddr()}, Up: true, MTU: 1500}
	out := []shell.Iface{lan}
	wan := r.WAN()
	for _, p := range st.Ports {
		i := shell.Iface{Name: p.Name, MAC: p.MAC, Up: p.LinkUp, MTU: 1500, SpeedMbps: p.SpeedMbps,
			RxPackets: p.RxFrames, TxPackets: p.TxFrames, RxBytes: p.RxBytes, TxBytes: p.TxBytes, Drops: p.TxDropped}
		for _, n := range p.Drops {
			i.Drops += n
		}
		if p.Role == "wan" && wan.Addr.IsValid() {
			i.Addrs = []netip.Prefix{wan.Addr}
		}
		out = append(out, i)
	}
	return out
}

func (h host) Routes() []shell.Route {
	var out []shell.Route
	for _, rt := range h.f.Router.Routes() {
		out = append(out, shell.Route{Dst: rt.Dst, Gateway: rt.Gateway, Iface: rt.Iface})
	}
	return out
}

func (h host) Ping(ctx context.Context, dst netip.Addr, seq uint16, size int) (time.Duration, error) {
	return h.f.Router.Ping(ctx, dst, seq, size)
}

func (h host) Resolve(ctx context.Context, name string) (netip.Addr, error) {
	return h.f.Router.Resolve(ctx, name)
}

// maxConntrackListed bounds the listing (the table holds up to 8192).
const maxConntrackListed = 1024

func (h host) Conntrack() []shell.Conn {
	var out []shell.Conn
	h.f.Router.Conntrack(func(c nat.ConnInfo) bool {
		sc := shell.Conn{Proto: protoName(c.Proto), Src: c.Orig.Src, Dst: c.Orig.Dst, Timeout: c.Expires}
		if c.Reply.Dst != c.Orig.Src {
			sc.NATSrc = c.Reply.Dst
		}
		switch {
		case c.Proto == nat.ProtoTCP:
			sc.State = c.State.String()
		case c.Assured:
			sc.State = "ASSURED"
		case c.Established:
			sc.State = "REPLIED"
		default:
			sc.State = "UNREPLIED"
		}
		out = append(out, sc)
		return len(out) < maxConntrackListed
	})
	return out
}

func protoName(p nat.Proto) string {
	switch p {
	case nat.ProtoTCP:
		return "tcp"
	case nat.ProtoUDP:
		return "udp"
	case nat.ProtoICMP:
		return "icmp"
	}
	return "?"
}

func (h host) Leases() []shell.Lease {
	var out []shell.Lease
	for _, l := range h.f.Router.Leases() {
		sl := shell.Lease{MAC: l.MAC.String(), Hostname: l.Hostname, Addr: l.IP}
		if !l.Static {
			sl.Expires = l.Expires
		}
		out = append(out, sl)
	}
	return out
}

// Switch: no board wires a switch into the firmware yet (the
// flashable-board issue wires arswitch).
func (h host) Switch() (shell.SwitchInfo, bool) { return shell.SwitchInfo{}, false }

func (h host) Logread(ctx context.Context, w io.Writer, args []string) error {
	return h.f.Ring.Logread(ctx, w, args)
}

func (h host) Cfg(in io.Reader, w io.Writer, args []string) error {
	return h.f.Config.Command(in, w, args)
}

func (h host) Services(w io.Writer, args []string) error { return h.f.Sup.Command(w, args) }

func (h host) SetPassword(proof, pw string) error { return h.f.Auth.SetPassword(proof, pw) }

// ResetPassword is passwd on the serial console (shell.PasswordResetter):
// physical access needs no proof.
func (h host) ResetPassword(pw string) error { return h.f.Auth.ResetPassword(pw) }

func (h host) Reboot() error { return h.f.reboot() }

// WifiStats implements shell.WifiStatser: the athstats and wifistats
// commands.
func (h host) WifiStats(w io.Writer) error { return h.f.wifiStats(w) }
