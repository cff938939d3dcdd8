package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// postPaths are the UI's POST handlers, login included.
func postPaths() []string {
	var ps []string
	for p, rt := range routes {
		if rt.post != nil {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps
}

// FuzzForms posts random form values to each POST handler with a valid
// session and token: no panic, no server error, a refused change is
// shown (422) and leaves nothing staged.
func FuzzForms(f *testing.F) {
	key := testKey(1)
	for i, seed := range []string{
		"ipaddr=10.0.0.1&netmask=255.255.255.0",
		"ipaddr=1.2.3.4.5&netmask=255.255.255.255",
		"start=120&limit=50&leasetime=12h",
		"start=-1&limit=99999999999999999999&leasetime=12hh",
		"ssid=home&encryption=psk2&key=passphrase",
		"ssid=%00&encryption=none&key=",
		"name=x&proto=tcp%2Budp&src_dport=1-65535&dest_ip=192.168.1.2&dest_port=",
		"name=%3Cscript%3E&proto=udp&src_dport=65536&dest_ip=::1",
		"id=@redirect[0]&fp=00",
		"id=@redirect[-1]&fp=",
		"key=" + url.QueryEscape(key),
		"key=ssh-ed25519+AAAAC3NzaC1lZDI1NTE5AAAA",
		"confirm=yes",
		"password=" + testPassword + "&next=//x",
		"token=t&password=12345678&password2=12345678",
		"%zz=1&&=",
	} {
		f.Add(uint8(i), seed)
	}
	paths := postPaths()
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		h := newHarness(t)
		cookie, csrf := h.login()
		path := paths[int(which)%len(paths)]
		if path == "/reboot" {
			h.ui.reboot = func() error { return nil }
		}
		if path == "/system/upgrade" {
			h.ui.upgrader = &fakeUpgrader{}
		}
		vals, err := url.ParseQuery(body)
		if err != nil {
			vals = url.Values{"raw": {body}}
		}
		vals.Set(csrfField, csrf)
		w := h.do(req{method: "POST", path: path, form: vals, cookie: cookie})
		switch w.Code {
		case http.StatusSeeOther, http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusUnprocessableEntity,
			http.StatusTooManyRequests:
		default:
			t.Fatalf("%s %q: status %d: %s", path, body, w.Code, w.Body)
		}
		if w.Code == http.StatusUnprocessableEntity && !strings.Contains(w.Body.String(), `class=err`) {
			t.Fatalf("%s %q: refused without an error shown:\n%s", path, body, w.Body)
		}
		if committed, staged, _, _ := h.store.snapshot(); committed != staged {
			t.Fatalf("%s %q: changes left staged:\n%s", path, body, staged)
		}
	})
}
