package router

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/httpd"
	"github.com/gowrt/gowrt/net/nat"
)

// PortStatus is one port's line on the status page.
//
// The traffic counters are the port driver's own (net.CounterReader):
// every frame the port received or sent, whatever the bridge or the stack
// did with it. A NIC without counters shows what br-lan (LAN ports) or
// the router's stack (WAN) exchanged with it instead.
type PortStatus struct {
	Name       string `json:"name"`
	Role       string `json:"role"` // "lan" or "wan"
	MAC        string `json:"mac"`
	LinkUp     bool   `json:"link_up"`
	SpeedMbps  int    `json:"speed_mbps"`
	FullDuplex bool   `json:"full_duplex"`
	RxFrames   uint64 `json:"rx_frames"`
	RxBytes    uint64 `json:"rx_bytes"`
	TxFrames   uint64 `json:"tx_frames"`
	TxBytes    uint64 `json:"tx_bytes"`
	// TxDropped counts frames for this port that never reached its
	// driver: it refused them (TX ring full, link down) and br-lan (LAN)
	// or the stack's queue (WAN) had to drop them.
	TxDropped uint64 `json:"tx_dropped"`
	// Drops counts the frames the port itself lost, by reason
	// (net.DropReason names, only reasons that occurred). On the WAN
	// port it also counts the frames the router's stack refused as they
	// came from the port: "stack-oversize" (longer than the MTU 1500 plus
	// the Ethernet header and any VLAN tag), "stack-truncated" (shorter
	// than an Ethernet header), "stack-not-ip" (802.3 length frames such
	// as STP) and "stack-not-attached" (before the stack was up). On LAN
	// ports br-lan does that, and counts in Status.Drops.
	Drops map[string]uint64 `json:"drops,omitempty"`
}

// Status is what the status page shows.
type Status struct {
	Board     string       `json:"board"`
	Uptime    string       `json:"uptime"`
	LANAddr   string       `json:"lan_addr"`
	BridgeMAC string       `json:"bridge_mac"`
	Ports     []PortStatus `json:"ports"`
	Forwarded uint64       `json:"bridge_forwarded"`
	Flooded   uint64       `json:"bridge_flooded"`
	FDB       int          `json:"bridge_fdb_entries"`
	// Drops counts the bridge's dropped frames by reason (only reasons
	// that occurred): malformed frames, VLAN filtering, storm control.
	Drops map[string]uint64 `json:"bridge_drops,omitempty"`
	// HTTPConns is the status page's open connections; HTTPRejected
	// counts those closed at once for being over a connection limit
	// (HTTPLimits.MaxConns, MaxConnsPerSource).
	HTTPConns    int    `json:"http_conns"`
	HTTPRejected uint64 `json:"http_conns_rejected"`

	WAN       WANStatus       `json:"wan"`
	Leases    []LeaseStatus   `json:"dhcp_leases"`
	Conntrack ConntrackStatus `json:"conntrack"`
	Forward   ForwardStatus   `json:"forwarding"`
	DNS       DNSStatus       `json:"dns"`
	Time      TimeStatus      `json:"time"`
	// Wifi is the access point's athstats view (per-station rate
	// control, aggregate sizes, retries), when SetWifiStats gave one.
	Wifi string `json:"wifi,omitempty"`
}

// WANStatus is the WAN's address and where it came from.
type WANStatus struct {
	Proto     string   `json:"proto"` // "dhcp" or "static"
	Addr      string   `json:"addr,omitempty"`
	Gateway   string   `json:"gateway,omitempty"`
	DNS       []string `json:"dns,omitempty"`
	Server    string   `json:"dhcp_server,omitempty"`
	LeaseLeft string   `json:"lease_left,omitempty"` // until the lease expires
	Changes   uint64   `json:"changes"`              // address appeared, changed, lost
}

// LeaseStatus is one DHCP lease on the LAN.
type LeaseStatus struct {
	MAC      string `json:"mac"`
	Addr     string `json:"addr"`
	Hostname string `json:"hostname,omitempty"`
	Expires  string `json:"expires_in"`
	Static   bool   `json:"static,omitempty"`
}

// ConntrackStatus is the connection table's fill and losses.
type ConntrackStatus struct {
	Conns   int               `json:"conns"`
	Max     int               `json:"max"`
	Created uint64            `json:"created"`
	Drops   map[string]uint64 `json:"drops,omitempty"` // by reason, only reasons that occurred
}

// ForwardStatus counts the forwarding layer's work.
type ForwardStatus struct {
	Forwarded uint64 `json:"forwarded"`
	FastPath  uint64 `json:"fast_path"`
	Local     uint64 `json:"local"`
	NoRoute   uint64 `json:"no_route"`
	Rejected  uint64 `json:"rejected"`
	InputDrop uint64 `json:"input_dropped"`
	TxErrors  uint64 `json:"tx_errors"`
	TooBig    uint64 `json:"too_big"` // longer than the egress MTU
}

// DNSStatus counts the DNS forwarder's work.
type DNSStatus struct {
	Queries       uint64 `json:"queries"`
	CacheHits     uint64 `json:"cache_hits"`
	Upstream      uint64 `json:"upstream_queries"`
	RebindBlocked uint64 `json:"rebind_blocked"`
	Malformed     uint64 `json:"malformed"`
}

// TimeStatus says whether the clock is set.
type TimeStatus struct {
	Now    string `json:"now"`
	Synced bool   `json:"synced"`
}

// Status returns a snapshot of the router's state.
func (r *Router) Status() Status {
	st := Status{
		Board:     r.cfg.Board,
		Uptime:    time.Since(r.started).Truncate(time.Second).String(),
		LANAddr:   r.LANAddr().String(),
		BridgeMAC: r.cfg.BridgeMAC.String(),
		Forwarded: r.br.Forwarded(),
		Flooded:   r.br.Flooded(),
		FDB:       r.br.FDBEntries(),
	}
	for i := range r.br.Stats.Drops {
		if n := r.br.Stats.Drops[i].Load(); n != 0 {
			if st.Drops == nil {
				st.Drops = map[string]uint64{}
			}
			st.Drops[bridge.Reason(i).String()] = n
		}
	}
	for _, p := range r.ports {
		st.Ports = append(st.Ports, r.portStatus(p))
	}
	if r.httpLn != nil {
		hs := r.httpLn.Stats()
		st.HTTPConns, st.HTTPRejected = hs.Open, hs.Rejected()
	}
	r.servicesStatus(&st)
	r.wifiMu.Lock()
	ws := r.wifiStats
	r.wifiMu.Unlock()
	if ws != nil {
		var b strings.Builder
		if err := ws(&b); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		st.Wifi = b.String()
	}
	return st
}

// SetWifiStats gives the status page a Wi-Fi section: fn writes the
// access point's statistics (wlan/ap's WriteStats). nil removes it.
func (r *Router) SetWifiStats(fn func(w io.Writer) error) {
	r.wifiMu.Lock()
	r.wifiStats = fn
	r.wifiMu.Unlock()
}

// servicesStatus fills in the WAN, the connection table, the forwarding
// counters and the services.
func (r *Router) servicesStatus(st *Status) {
	r.wan.mu.Lock()
	st.WAN = WANStatus{Proto: r.cfg.Uplink.Proto, Changes: r.wan.changes}
	if r.wan.addr.IsValid() {
		st.WAN.Addr = r.wan.addr.String()
	}
	if r.wan.gateway.IsValid() {
		st.WAN.Gateway = r.wan.gateway.String()
	}
	for _, d := range r.wan.dns {
		st.WAN.DNS = append(st.WAN.DNS, d.String())
	}
	if l := r.wan.lease; l != nil {
		st.WAN.Server = l.Server.String()
		st.WAN.LeaseLeft = max(time.Until(l.Obtained.Add(l.Duration)), 0).Truncate(time.Second).String()
	}
	r.wan.mu.Unlock()
	if r.fwd != nil {
		ts := r.fwd.Table().Stats()
		st.Conntrack = ConntrackStatus{Conns: ts.Conns, Max: ts.Max, Created: ts.Created}
		for i, n := range ts.Drops {
			if n != 0 {
				if st.Conntrack.Drops == nil {
					st.Conntrack.Drops = map[string]uint64{}
				}
				st.Conntrack.Drops[nat.DropReason(i).String()] = n
			}
		}
		fs := &r.fwd.Stats
		st.Forward = ForwardStatus{Forwarded: fs.Forwarded.Load(), FastPath: fs.FastPath.Load(), Local: fs.Local.Load(),
			NoRoute: fs.NoRoute.Load(), Rejected: fs.Rejected.Load(), InputDrop: fs.InputDrop.Load(), TxErrors: fs.TxErrors.Load(),
			TooBig: fs.TooBig.Load()}
	}
	if d := r.svc.dhcp.Load(); d != nil {
		for _, l := range d.Leases() {
			st.Leases = append(st.Leases, LeaseStatus{MAC: l.MAC.String(), Addr: l.IP.String(), Hostname: l.Hostname,
				Expires: max(time.Until(l.Expires), 0).Truncate(time.Second).String(), Static: l.Static})
		}
	}
	if f := r.svc.dns; f != nil {
		ds := f.Stats()
		st.DNS = DNSStatus{Queries: ds.Queries, CacheHits: ds.CacheHits, Upstream: ds.UpstreamQueries,
			RebindBlocked: ds.RebindBlocked, Malformed: ds.Malformed}
	}
	if c := r.svc.clock; c != nil {
		st.Time = TimeStatus{Now: c.Now().UTC().Format(time.RFC3339), Synced: c.Synced()}
	}
}

// WANAddr returns the WAN's address (invalid while it has none).
func (r *Router) WANAddr() netip.Prefix {
	r.wan.mu.Lock()
	defer r.wan.mu.Unlock()
	return r.wan.addr
}

func (r *Router) portStatus(p portState) PortStatus {
	ls := p.NIC.Link()
	ps := PortStatus{Name: p.Name, Role: "lan", MAC: p.NIC.MACAddress().String(),
		LinkUp: ls.Up, SpeedMbps: ls.SpeedMbps, FullDuplex: ls.FullDuplex}
	if p.num < 0 {
		ps.Role = "wan"
		es := &r.wanEP.Stats
		ps.RxFrames, ps.RxBytes = es.RxFrames.Load(), es.RxBytes.Load()
		ps.TxFrames, ps.TxBytes = es.TxFrames.Load(), es.TxBytes.Load()
		ps.TxDropped = es.TxRingFull.Load() + es.TxLinkDown.Load() + es.TxErrors.Load()
		for _, d := range []struct {
			name string
			n    uint64
		}{
			{"stack-oversize", es.RxOversize.Load()}, {"stack-truncated", es.RxMalformed.Load()},
			{"stack-not-ip", es.RxUnsupported.Load()}, {"stack-not-attached", es.RxNotAttached.Load()},
		} {
			ps.addDrops(d.name, d.n)
		}
	} else if c := r.br.PortStats(p.num); c != nil {
		ps.RxFrames, ps.RxBytes = c.RxFrames.Load(), c.RxBytes.Load()
		ps.TxFrames, ps.TxBytes = c.TxFrames.Load(), c.TxBytes.Load()
		ps.TxDropped = c.TxDropped.Load()
	}
	if cr, ok := p.NIC.(gnet.CounterReader); ok {
		c := cr.Counters()
		ps.RxFrames, ps.RxBytes = c.RxFrames, c.RxBytes
		ps.TxFrames, ps.TxBytes = c.TxFrames, c.TxBytes
		for i, n := range c.Drops {
			ps.addDrops(gnet.DropReason(i).String(), n)
		}
	}
	return ps
}

func (ps *PortStatus) addDrops(reason string, n uint64) {
	if n == 0 {
		return
	}
	if ps.Drops == nil {
		ps.Drops = map[string]uint64{}
	}
	ps.Drops[reason] = n
}

// ServeHTTPD serves the status page at / (HTML) and /status.json (a web
// UI elsewhere shows Status itself).
func (r *Router) ServeHTTPD(w httpd.ResponseWriter, req *httpd.Request) {
	if req.Method != "GET" && req.Method != "HEAD" {
		// RFC 9110 §15.5.6: a 405 lists the methods allowed.
		w.Header().Set("Allow", "GET, HEAD")
		httpd.Error(w, "method not allowed", httpd.StatusMethodNotAllowed)
		return
	}
	st := r.Status()
	switch req.Path {
	case "/status.json":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, renderHTML(st))
	default:
		httpd.NotFound(w, req)
	}
}

// renderHTML formats the page by hand: html/template would pull the
// reflection-heavy template engine into the firmware image.
func renderHTML(st Status) string {
	e := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html><head><title>gowrt %s</title></head><body>\n", e(st.Board))
	fmt.Fprintf(&b, "<h1>gowrt</h1>\n<p>board %s, uptime %s</p>\n", e(st.Board), e(st.Uptime))
	fmt.Fprintf(&b, "<p>br-lan %s (%s): %d forwarded, %d flooded, %d addresses learned</p>\n",
		e(st.LANAddr), e(st.BridgeMAC), st.Forwarded, st.Flooded, st.FDB)
	if len(st.Drops) > 0 {
		fmt.Fprintf(&b, "<p>br-lan dropped:%s</p>\n", drops(st.Drops))
	}
	fmt.Fprintf(&b, "<p>status page: %d connections open, %d refused over the connection limits</p>\n",
		st.HTTPConns, st.HTTPRejected)
	b.WriteString("<table border=1>\n<tr><th>port</th><th>role</th><th>MAC</th><th>link</th><th>rx frames</th><th>rx bytes</th><th>tx frames</th><th>tx bytes</th><th>tx dropped</th><th>port dropped</th></tr>\n")
	for _, p := range st.Ports {
		link := "down"
		if p.LinkUp {
			link = fmt.Sprintf("up %d Mbit/s", p.SpeedMbps)
			if p.FullDuplex {
				link += " full duplex"
			}
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td></tr>\n",
			e(p.Name), p.Role, p.MAC, link, p.RxFrames, p.RxBytes, p.TxFrames, p.TxBytes, p.TxDropped, drops(p.Drops))
	}
	b.WriteString("</table>\n")
	w := st.WAN
	switch {
	case w.Addr != "":
		fmt.Fprintf(&b, "<h2>WAN</h2>\n<p>%s %s via %s, DNS %s", e(w.Proto), e(w.Addr), e(w.Gateway), e(strings.Join(w.DNS, " ")))
		if w.LeaseLeft != "" {
			fmt.Fprintf(&b, ", lease from %s, %s left", e(w.Server), e(w.LeaseLeft))
		}
		b.WriteString("</p>\n")
	case w.Proto != "":
		fmt.Fprintf(&b, "<h2>WAN</h2>\n<p>%s: no address yet</p>\n", e(w.Proto))
	}
	c, f := st.Conntrack, st.Forward
	fmt.Fprintf(&b, "<p>connections tracked: %d of %d (%d created)", c.Conns, c.Max, c.Created)
	if len(c.Drops) > 0 {
		fmt.Fprintf(&b, ", dropped:%s", drops(c.Drops))
	}
	fmt.Fprintf(&b, "</p>\n<p>routed: %d forwarded (%d on the fast path), %d for the router, %d without a route, %d rejected, %d refused by the input rules</p>\n",
		f.Forwarded, f.FastPath, f.Local, f.NoRoute, f.Rejected, f.InputDrop)
	fmt.Fprintf(&b, "<p>DNS: %d queries, %d from the cache, %d upstream, %d rebinding answers refused</p>\n",
		st.DNS.Queries, st.DNS.CacheHits, st.DNS.Upstream, st.DNS.RebindBlocked)
	if st.Time.Now != "" {
		synced := "not synchronised"
		if st.Time.Synced {
			synced = "synchronised"
		}
		fmt.Fprintf(&b, "<p>time: %s (%s)</p>\n", e(st.Time.Now), synced)
	}
	if st.Wifi != "" {
		fmt.Fprintf(&b, "<h2>Wi-Fi</h2>\n<pre>%s</pre>\n", e(st.Wifi))
	}
	b.WriteString("<h2>DHCP leases</h2>\n<table border=1>\n<tr><th>host</th><th>address</th><th>MAC</th><th>expires in</th></tr>\n")
	for _, l := range st.Leases {
		exp := l.Expires
		if l.Static {
			exp += " (static)"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", e(l.Hostname), e(l.Addr), e(l.MAC), e(exp))
	}
	b.WriteString("</table>\n</body></html>\n")
	return b.String()
}

// drops formats drop counters as " reason count" pairs in reason order.
func drops(m map[string]uint64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, " %s %d", html.EscapeString(k), m[k])
	}
	return b.String()
}
