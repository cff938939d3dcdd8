package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// field is one input of a settings form, bound to one configuration key.
type field struct {
	name    string // form field name
	key     string // configuration key
	label   markup
	kind    markup   // input type: "text", "number", "password"; "select" uses choices
	choices []string // for "select"
	help    markup
	check   func(v string) error
}

// form is a settings page that sets its fields' keys and commits.
type form struct {
	path   string
	title  string
	intro  markup
	fields []field
	// apply stages the validated values; nil sets each field's key.
	apply func(u *UI, vals map[string]string) error
	// saved is the message after a successful save (default: saved and
	// applied), for settings the firmware cannot apply at once.
	saved markup
}

var (
	lanForm = form{path: "/settings/lan", title: "LAN",
		intro: "The router's address on the LAN. After a change, open this UI at the new address; clients get addresses in the new network at their next DHCP lease (or reconnect).",
		fields: []field{
			{name: "ipaddr", key: "network.lan.ipaddr", label: "IPv4 address", kind: "text", check: checkHostAddr},
			{name: "netmask", key: "network.lan.netmask", label: "Netmask", kind: "text", check: checkNetmask},
		}}
	dhcpForm = form{path: "/settings/dhcp", title: "DHCP",
		intro: "The LAN's DHCP pool: addresses from the network's start-th host on, limit of them.",
		fields: []field{
			{name: "start", key: "dhcp.lan.start", label: "Start", kind: "number", help: "offset of the first pool address in the LAN network", check: checkCount},
			{name: "limit", key: "dhcp.lan.limit", label: "Limit", kind: "number", help: "number of addresses in the pool", check: checkCount},
			{name: "leasetime", key: "dhcp.lan.leasetime", label: "Lease time", kind: "text", help: "e.g. 12h, 30m, 1d or infinite", check: checkLeaseTime},
		}}
	wifiForm = form{path: "/settings/wifi", title: "Wi-Fi",
		intro: "The access point's network name and WPA2 passphrase.",
		fields: []field{
			{name: "ssid", key: wifiPrefix + "ssid", label: "Network name (SSID)", kind: "text", check: checkSSID},
			{name: "encryption", key: wifiPrefix + "encryption", label: "Encryption", kind: "select", choices: []string{"psk2", "none"}},
			{name: "key", key: wifiPrefix + "key", label: "Passphrase", kind: "password", help: "8 to 63 characters; leave empty to keep the current one"},
		},
		apply: applyWifi,
		saved: "Saved. There is no Wi-Fi driver yet: the settings are stored for it."}
)

// wifiPrefix is the access point's section (OpenWrt's default name for
// radio0's first interface, wifi-iface 'default_radio0').
const wifiPrefix = "wireless.default_radio0."

func (u *UI) lanPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.formPage(w, r, s, &lanForm)
}
func (u *UI) lanSave(w http.ResponseWriter, r *http.Request, s *session) {
	u.formSave(w, r, s, &lanForm)
}
func (u *UI) dhcpPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.formPage(w, r, s, &dhcpForm)
}
func (u *UI) dhcpSave(w http.ResponseWriter, r *http.Request, s *session) {
	u.formSave(w, r, s, &dhcpForm)
}
func (u *UI) wifiPage(w http.ResponseWriter, r *http.Request, s *session) {
	u.formPage(w, r, s, &wifiForm)
}
func (u *UI) wifiSave(w http.ResponseWriter, r *http.Request, s *session) {
	u.formSave(w, r, s, &wifiForm)
}

// formPage shows the form with the committed-or-staged values.
func (u *UI) formPage(w http.ResponseWriter, r *http.Request, s *session, f *form) {
	vals := map[string]string{}
	for _, fl := range f.fields {
		if fl.kind == "password" {
			continue // secrets are not sent back to the browser
		}
		v, err := u.store.Get(fl.key)
		if err == nil {
			vals[fl.name] = v
		}
	}
	u.renderForm(w, http.StatusOK, s, f, vals, "", r.URL.Query().Get("saved") != "")
}

func (u *UI) renderForm(w http.ResponseWriter, status int, s *session, f *form, vals map[string]string, errMsg string, saved bool) {
	var p page
	u.start(&p, f.title, s)
	p.m("<section><h2>")
	p.text(f.title)
	p.m("</h2><p>" + f.intro + "</p>\n")
	if saved && errMsg == "" && f.saved != "" {
		p.m("<p class=ok>" + f.saved + "</p>\n")
	} else {
		notice(&p, errMsg, saved)
	}
	p.m(`<form method=post`)
	p.attr("action", f.path)
	p.m(">")
	csrfInput(&p, s)
	for _, fl := range f.fields {
		p.m("<label")
		p.attr("for", fl.name)
		p.m(">" + fl.label + "</label>")
		if fl.kind == "select" {
			p.m("<select")
			p.attr("id", fl.name)
			p.attr("name", fl.name)
			p.m(">")
			for _, c := range fl.choices {
				p.m("<option")
				p.attr("value", c)
				if vals[fl.name] == c {
					p.m(" selected")
				}
				p.m(">")
				p.text(c)
				p.m("</option>")
			}
			p.m("</select>\n")
		} else {
			p.m("<input")
			p.attr("id", fl.name)
			p.attr("name", fl.name)
			p.m(" type=" + fl.kind)
			p.attr("value", vals[fl.name])
			if fl.kind == "password" {
				p.m(" autocomplete=new-password")
			}
			p.m(">\n")
		}
		if fl.help != "" {
			p.m("<small class=muted>" + fl.help + "</small>\n")
		}
	}
	p.m("<button>Save and apply</button></form></section>\n")
	u.end(&p, false)
	send(w, status, &p)
}

// notice writes an error (escaped) or the saved message.
func notice(p *page, errMsg string, saved bool) {
	if errMsg != "" {
		p.tagged("<p class=err>", "</p>\n", errMsg)
	} else if saved {
		p.m("<p class=ok>Saved and applied.</p>\n")
	}
}

// formSave validates, stages and commits a form; on any error it drops
// the staged changes and shows the form again with the user's input.
func (u *UI) formSave(w http.ResponseWriter, r *http.Request, s *session, f *form) {
	vals := map[string]string{}
	var errs []string
	for _, fl := range f.fields {
		v := r.PostForm.Get(fl.name)
		if fl.kind != "password" {
			v = strings.TrimSpace(v)
		}
		vals[fl.name] = v
		if fl.kind == "select" && !contains(fl.choices, v) {
			errs = append(errs, fmt.Sprintf("%s: choose one of %s", fl.label, strings.Join(fl.choices, ", ")))
		} else if fl.check != nil {
			if err := fl.check(v); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", fl.label, err))
			}
		}
	}
	err := errors.New(strings.Join(errs, "; "))
	if len(errs) == 0 {
		err = u.commit(func() error {
			if f.apply != nil {
				return f.apply(u, vals)
			}
			for _, fl := range f.fields {
				if err := u.store.Set(fl.key, vals[fl.name]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		delete(vals, "key") // never echo a passphrase
		u.renderForm(w, http.StatusUnprocessableEntity, s, f, vals, err.Error(), false)
		return
	}
	u.log.Info("web: settings saved", "page", f.path, "src", source(r))
	http.Redirect(w, r, f.path+"?saved=1", http.StatusSeeOther)
}

// commit stages changes with stage and commits them; on any error the
// staged changes are reverted, so a refused save leaves nothing behind.
func (u *UI) commit(stage func() error) error {
	if err := stage(); err != nil {
		u.store.Revert()
		return err
	}
	if _, err := u.store.Commit(); err != nil {
		u.store.Revert()
		return err
	}
	return nil
}

// applyWifi sets the SSID and encryption, and the passphrase when one
// was given (an empty one keeps the stored passphrase, which the page
// never shows).
func applyWifi(u *UI, vals map[string]string) error {
	enc, key := vals["encryption"], vals["key"]
	if enc == "psk2" {
		if key == "" {
			old, err := u.store.Get(wifiPrefix + "key")
			if err != nil || checkPassphrase(old) != nil {
				return errors.New("Passphrase: WPA2 needs a passphrase of 8 to 63 characters")
			}
		} else if err := checkPassphrase(key); err != nil {
			return fmt.Errorf("Passphrase: %v", err)
		}
	}
	if err := u.store.Set(wifiPrefix+"ssid", vals["ssid"]); err != nil {
		return err
	}
	if err := u.store.Set(wifiPrefix+"encryption", enc); err != nil {
		return err
	}
	if key != "" {
		return u.store.Set(wifiPrefix+"key", key)
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// checkHostAddr accepts an IPv4 unicast address.
func checkHostAddr(v string) error {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return errors.New("not an IPv4 address")
	}
	if a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return errors.New("not a unicast address")
	}
	return nil
}

// checkNetmask accepts a dotted IPv4 netmask of /8 to /30: a LAN needs
// room for the router and clients, and a mask is contiguous ones.
func checkNetmask(v string) error {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return errors.New("not a dotted IPv4 netmask")
	}
	b := a.As4()
	m := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	ones := 0
	for m&(1<<31) != 0 {
		m <<= 1
		ones++
	}
	if m != 0 {
		return errors.New("not a contiguous netmask")
	}
	if ones < 8 || ones > 30 {
		return errors.New("must be between 255.0.0.0 and 255.255.255.252")
	}
	return nil
}

// checkCount accepts a positive decimal number.
func checkCount(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1<<24 {
		return errors.New("not a positive number")
	}
	return nil
}

// checkLeaseTime accepts OpenWrt's leasetime: a number with an optional
// unit s, m, h, d or w, or "infinite" (dhcp.sh's leasetime option as
// dnsmasq's dhcp-range lease time).
func checkLeaseTime(v string) error {
	if v == "infinite" {
		return nil
	}
	num := strings.TrimRight(v, "smhdw")
	if len(v)-len(num) > 1 {
		return errors.New("one unit at most (s, m, h, d or w)")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return errors.New("not a lease time such as 12h")
	}
	return nil
}

// checkSSID accepts 1 to 32 octets (IEEE 802.11-2020 9.4.2.2, SSID
// element) without control characters.
func checkSSID(v string) error {
	if len(v) < 1 || len(v) > 32 {
		return errors.New("1 to 32 bytes")
	}
	for _, c := range v {
		if c < 0x20 || c == 0x7f {
			return errors.New("no control characters")
		}
	}
	return nil
}

// checkPassphrase accepts a WPA2 passphrase: 8 to 63 printable ASCII
// characters (IEEE 802.11-2020 J.4.1).
func checkPassphrase(v string) error {
	if len(v) < 8 || len(v) > 63 {
		return errors.New("8 to 63 characters")
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return errors.New("printable ASCII characters only")
		}
	}
	return nil
}
