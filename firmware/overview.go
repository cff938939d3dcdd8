package firmware

import (
	"runtime"
	"strings"

	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/mgmt/web"
	"github.com/gowrt/gowrt/sys/syslog"
)

// overview is what the web UI sees of the firmware (web.Source).
type overview struct{ f *Firmware }

var _ web.Source = overview{}

// overviewLogLines is how many recent log lines the status page shows.
const overviewLogLines = 12

func (o overview) Overview() web.Overview {
	f := o.f
	r := f.Router
	in := host{f}.Info()
	ov := web.Overview{System: web.System{Board: in.Board, Version: in.Version, Hostname: in.Hostname,
		Uptime: in.Uptime, Busy: in.Busy, MemUsed: in.MemUsed, Goroutines: runtime.NumGoroutine()}}
	if in.MemTotal > in.MemUsed {
		ov.System.MemFree = in.MemTotal - in.MemUsed
	}
	w := r.WAN()
	ov.WAN = web.WAN{Up: w.Addr.IsValid(), Proto: w.Proto, Addr: w.Addr, Gateway: w.Gateway, DNS: w.DNS, LeaseLeft: w.LeaseLeft}
	ov.LAN = web.LAN{Addr: r.LANAddr()}
	for _, l := range r.Leases() {
		wl := web.Lease{Hostname: l.Hostname, MAC: l.MAC.String(), Addr: l.IP}
		if !l.Static {
			wl.Expires = l.Expires
		}
		ov.Leases = append(ov.Leases, wl)
	}
	st := r.Status()
	for _, p := range st.Ports {
		ov.Ports = append(ov.Ports, web.Port{Name: p.Name, Role: p.Role, Link: p.LinkUp, SpeedMbps: p.SpeedMbps,
			RxBytes: p.RxBytes, TxBytes: p.TxBytes, RxPackets: p.RxFrames, TxPackets: p.TxFrames, Drops: p.Drops})
	}
	ov.Drops = map[string]uint64{}
	for k, n := range st.Drops {
		ov.Drops["bridge "+k] = n
	}
	for k, n := range st.Conntrack.Drops {
		ov.Drops["conntrack "+k] = n
	}
	fw := st.Forward
	for k, n := range map[string]uint64{"no route": fw.NoRoute, "firewall reject": fw.Rejected,
		"input dropped": fw.InputDrop, "tx error": fw.TxErrors, "too big": fw.TooBig} {
		if n > 0 {
			ov.Drops[k] = n
		}
	}
	// Recent lines at notice or worse: routine info stays in logread.
	for _, rec := range f.Ring.Records(syslog.Filter{MinSeverity: syslog.Notice, Facility: -1, Last: overviewLogLines}) {
		ov.Log = append(ov.Log, formatLine(rec))
	}
	for _, s := range f.Sup.Status() {
		ov.Services = append(ov.Services, web.Service{Name: s.Name, State: s.State, Restarts: s.Restarts})
	}
	return ov
}

// overviewLineMax bounds a log line on the open status page: the
// message, not the stack traces and attributes logread shows.
const overviewLineMax = 160

func formatLine(r syslog.Record) string {
	msg := r.Msg
	if i := strings.Index(msg, " stack="); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > overviewLineMax {
		msg = strings.ToValidUTF8(msg[:overviewLineMax], "") + "…"
	}
	var b strings.Builder
	b.WriteString(r.Time.UTC().Format("Jan _2 15:04:05 "))
	if r.Service != "" {
		b.WriteString(r.Service)
		b.WriteString(": ")
	}
	b.WriteString(msg)
	return b.String()
}

func (o overview) Details() any { return o.f.Router.Status() }

// webConfig adapts the configuration to the web UI's view of it.
type webConfig struct{ *cfg.Config }

func (c webConfig) Sections(pkg, typ string) []web.Section {
	var out []web.Section
	for _, s := range c.Config.Sections(pkg, typ) {
		out = append(out, web.Section{ID: s.ID, Type: s.Type, Options: s.Options})
	}
	return out
}
