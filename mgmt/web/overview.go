package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// navPages are the header's links.
var navPages = []struct {
	path  string
	title markup
}{
	{"/", "Overview"}, {"/settings/lan", "LAN"}, {"/settings/dhcp", "DHCP"}, {"/settings/wifi", "Wi-Fi"},
	{"/settings/forwards", "Port forwards"}, {"/settings/ssh", "SSH keys"}, {"/system/upgrade", "Upgrade"}, {"/reboot", "Reboot"},
}

// start writes the document's head and header; s is the session (nil:
// not logged in), live adds the overview's script.
func (u *UI) start(p *page, title string, s *session) {
	p.m("<!doctype html>\n<html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width,initial-scale=1\">")
	p.m(`<link rel=icon href="data:,"><title>`)
	p.text(title)
	p.m(" · gowrt</title><style>" + style + "</style></head><body>\n<header><b>gowrt</b>")
	for _, n := range navPages {
		p.m("<a")
		p.attr("href", n.path)
		p.m(">" + n.title + "</a>")
	}
	if s != nil {
		p.m(`<form method=post action="/logout">`)
		csrfInput(p, s)
		p.m(`<button>Log out</button></form>`)
	} else {
		p.m(`<form method=get action="/login"><button>Log in</button></form>`)
	}
	p.m("</header>\n<main>\n")
}

// end closes the document; the overview passes its live script.
func (u *UI) end(p *page, live bool) {
	p.m("</main>\n")
	if live {
		p.m("<script>" + script + "</script>\n")
	}
	p.m("</body></html>\n")
}

// csrfInput writes the session's CSRF token as a hidden field.
func csrfInput(p *page, s *session) {
	p.m(`<input type=hidden name="` + csrfField + `"`)
	p.attr("value", s.csrf)
	p.m(">")
}

// send writes a finished page.
func send(w http.ResponseWriter, status int, p *page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(p.String()))
}

// overviewPage is /: what the router is doing, readable without a login.
func (u *UI) overviewPage(w http.ResponseWriter, r *http.Request, s *session) {
	o := u.src.Overview()
	var p page
	u.start(&p, "Overview", s)

	sy := o.System
	p.m("<section><h2>System</h2><table>\n")
	row(&p, "Hostname", sy.Hostname)
	row(&p, "Board", sy.Board)
	row(&p, "Firmware", sy.Version)
	p.m(`<tr><th>Uptime</th><td id=uptime>`)
	p.text(duration(sy.Uptime))
	p.m(`</td></tr><tr><th>Load</th><td id=busy>`)
	p.printf("%d %%", int(sy.Busy*100+0.5))
	p.m(`</td></tr><tr><th>Memory used</th><td id=memused>`)
	p.text(size(sy.MemUsed))
	p.m(`</td></tr><tr><th>Memory free</th><td id=memfree>`)
	p.text(size(sy.MemFree))
	p.m(`</td></tr><tr><th>Goroutines</th><td id=goroutines>`)
	p.printf("%d", sy.Goroutines)
	p.m("</td></tr>\n</table></section>\n")

	wan := o.WAN
	p.m("<section><h2>WAN</h2><table>\n")
	state := "down"
	if wan.Up {
		state = "up"
	}
	row(&p, "Status", state)
	row(&p, "Protocol", wan.Proto)
	row(&p, "Address", orDash(wan.Addr.IsValid(), wan.Addr.String()))
	row(&p, "Gateway", orDash(wan.Gateway.IsValid(), wan.Gateway.String()))
	dns := ""
	for i, d := range wan.DNS {
		if i > 0 {
			dns += ", "
		}
		dns += d.String()
	}
	row(&p, "DNS", orDash(dns != "", dns))
	if wan.LeaseLeft > 0 {
		row(&p, "Lease left", duration(wan.LeaseLeft))
	}
	p.m("</table></section>\n")

	p.m("<section><h2>LAN</h2><table>\n")
	row(&p, "Address", orDash(o.LAN.Addr.IsValid(), o.LAN.Addr.String()))
	row(&p, "DHCP leases", strconv.Itoa(len(o.Leases)))
	p.m("</table></section>\n")

	u.portsSection(&p, o.Ports)
	u.leasesSection(&p, o.Leases, u.sessions.now())

	if len(o.Stations) > 0 {
		p.m("<section class=wide><h2>Wi-Fi stations</h2><table>\n<tr><th>MAC</th><th>Signal</th><th>Rate</th><th>Airtime</th></tr>\n")
		for _, st := range o.Stations {
			p.m("<tr><td>")
			p.text(st.MAC)
			p.printf("</td><td class=n>%d dBm</td><td class=n>%s Mbit/s</td><td class=n>%d %%</td></tr>\n",
				st.Signal, strconv.FormatFloat(st.RateMbps, 'f', 1, 64), int(st.Airtime*100+0.5))
		}
		p.m("</table></section>\n")
	}

	p.m("<section><h2>Drops by reason</h2>")
	if len(o.Drops) == 0 {
		p.m("<p class=muted>none</p>")
	} else {
		p.m("<table>\n")
		for _, k := range slices.Sorted(maps.Keys(o.Drops)) {
			p.m("<tr><th>")
			p.text(k)
			p.m("</th><td class=n>")
			p.num(o.Drops[k])
			p.m("</td></tr>\n")
		}
		p.m("</table>")
	}
	p.m("</section>\n")

	p.m("<section><h2>Services</h2><table>\n<tr><th>Service</th><th>State</th><th>Restarts</th></tr>\n")
	for _, sv := range o.Services {
		p.m("<tr><td>")
		p.text(sv.Name)
		cls := markup("down")
		if sv.State == "running" || sv.State == "listening" {
			cls = "up"
		}
		p.m("</td><td class=" + cls + ">")
		p.text(sv.State)
		p.printf("</td><td class=n>%d</td></tr>\n", sv.Restarts)
	}
	p.m("</table></section>\n")

	p.m("<section class=wide><h2>Recent log</h2><pre>")
	for _, l := range o.Log {
		p.text(l)
		p.m("\n")
	}
	p.m("</pre></section>\n")
	u.end(&p, true)
	send(w, http.StatusOK, &p)
}

// portsSection writes the ports' link, traffic and graphs. Element ids
// carry the port's index, which the live script uses.
func (u *UI) portsSection(p *page, ports []Port) {
	p.m("<section class=wide><h2>Ports <small class=muted id=live></small></h2><table>\n")
	p.m("<tr><th>Port</th><th>Role</th><th>Link</th><th>Received</th><th>Sent</th><th>Packets in/out</th><th>Traffic (<span class=rx>in</span>/<span class=tx>out</span>)</th><th>Drops</th></tr>\n")
	for i, pt := range ports {
		p.m("<tr><td>")
		p.text(pt.Name)
		p.m("</td><td>")
		p.text(pt.Role)
		if pt.Link {
			p.printf(`</td><td class=up id=link%d>up %d Mbit/s`, i, pt.SpeedMbps)
		} else {
			p.printf(`</td><td class=down id=link%d>down`, i)
		}
		p.printf(`</td><td class=n id=rxb%d>%s</td><td class=n id=txb%d>%s</td>`, i, size(pt.RxBytes), i, size(pt.TxBytes))
		p.printf(`<td class=n><span id=rxp%d>%d</span> / <span id=txp%d>%d</span></td>`, i, pt.RxPackets, i, pt.TxPackets)
		p.printf(`<td><svg class=g viewBox="0 0 120 30" preserveAspectRatio=none role=img aria-label="traffic graph"><polyline class=rx id=grx%d points=""/><polyline class=tx id=gtx%d points=""/></svg><br><small class=muted id=rate%d></small></td><td>`, i, i, i)
		drops(p, pt.Drops)
		p.m("</td></tr>\n")
	}
	p.m("</table></section>\n")
}

// leasesSection writes the DHCP leases.
func (u *UI) leasesSection(p *page, leases []Lease, now time.Time) {
	p.m("<section class=wide><h2>DHCP leases</h2><table>\n<tr><th>Host name</th><th>Address</th><th>MAC</th><th>Expires in</th></tr>\n")
	for _, l := range leases {
		p.m("<tr><td>")
		p.text(orDash(l.Hostname != "", l.Hostname))
		p.m("</td><td>")
		p.text(l.Addr.String())
		p.m("</td><td>")
		p.text(l.MAC)
		p.m("</td><td>")
		if l.Expires.IsZero() {
			p.m("static")
		} else {
			p.text(duration(max(l.Expires.Sub(now), 0)))
		}
		p.m("</td></tr>\n")
	}
	if len(leases) == 0 {
		p.m("<tr><td colspan=4 class=muted>no leases</td></tr>\n")
	}
	p.m("</table></section>\n")
}

// drops writes drop counters by reason, in reason order.
func drops(p *page, m map[string]uint64) {
	if len(m) == 0 {
		p.m("<span class=muted>0</span>")
		return
	}
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			p.m("<br>")
		}
		p.text(k)
		p.m(" ")
		p.num(m[k])
	}
}

// row writes a table row of a heading and an escaped value.
func row(p *page, th markup, td string) {
	p.m("<tr><th>" + th + "</th><td>")
	p.text(td)
	p.m("</td></tr>\n")
}

func orDash(ok bool, s string) string {
	if !ok {
		return "–"
	}
	return s
}

// duration formats d as days, hours, minutes and seconds.
func duration(d time.Duration) string {
	s := int64(d / time.Second)
	days := s / 86400
	s -= days * 86400
	out := fmt.Sprintf("%dh %dm %ds", s/3600, s%3600/60, s%60)
	if days > 0 {
		out = fmt.Sprintf("%dd %s", days, out)
	}
	return out
}

// size formats a byte count with binary units.
func size(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}

// statusJSON is /status.json: Source.Details() with "overview" added.
func (u *UI) statusJSON(w http.ResponseWriter, r *http.Request, s *session) {
	body, err := statusDocument(u.src.Details(), u.src.Overview())
	if err != nil {
		u.log.Error("web: status.json", "err", err)
		http.Error(w, "status unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// statusDocument merges the overview into the details' JSON object,
// keeping the details' members as they are (tests of the router's status
// parse them). Details that are not an object go under "details".
func statusDocument(details any, o Overview) ([]byte, error) {
	ov, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	d, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	d = bytes.TrimSpace(d)
	var out []byte
	if len(d) >= 2 && d[0] == '{' && d[len(d)-1] == '}' {
		inner := bytes.TrimSpace(d[1 : len(d)-1])
		out = append(out, '{')
		if len(inner) > 0 {
			out = append(out, inner...)
			out = append(out, ',')
		}
	} else {
		out = append(out, `{"details":`...)
		out = append(out, d...)
		out = append(out, ',')
	}
	out = append(out, `"overview":`...)
	out = append(out, ov...)
	return append(out, '}', '\n'), nil
}
