package web

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testPassword = "s3cret-admin"

// testKey returns an ed25519 authorized_keys line from a fixed seed.
func testKey(seed byte) string {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	pk := ed25519.NewKeyFromSeed(s).Public().(ed25519.PublicKey)
	var blob []byte
	for _, part := range [][]byte{[]byte("ssh-ed25519"), pk} {
		blob = binary.BigEndian.AppendUint32(blob, uint32(len(part)))
		blob = append(blob, part...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " user" + string('0'+seed) + "@host"
}

// harness is a UI over fakes.
type harness struct {
	t       *testing.T
	ui      *UI
	src     *fakeSource
	store   *fakeStore
	auth    *fakeAuth
	limiter *fakeLimiter
	clock   *fakeClock
	reboots atomic.Int32
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, src: &fakeSource{hostname: "laptop"}, store: newFakeStore(),
		auth:    &fakeAuth{password: testPassword, token: "setup-token-1234"},
		limiter: &fakeLimiter{max: 3, failures: map[netip.Addr]int{}},
		clock:   &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}}
	ui, err := New(Config{Source: h.src, Config: h.store, Auth: h.auth, Limiter: h.limiter, Now: h.clock.Now,
		Reboot: func() error { h.reboots.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.ui = ui
	return h
}

// req is one request to the UI.
type req struct {
	method, path string
	form         url.Values
	cookie       string
	header       map[string]string
}

func (h *harness) do(r req) *httptest.ResponseRecorder {
	h.t.Helper()
	var body io.Reader
	if r.form != nil {
		body = strings.NewReader(r.form.Encode())
	}
	hr := httptest.NewRequest(r.method, "http://192.168.1.1"+r.path, body)
	hr.RemoteAddr = "192.168.1.100:40000"
	if r.form != nil {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.cookie != "" {
		hr.AddCookie(&http.Cookie{Name: cookieName, Value: r.cookie})
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ui.ServeHTTP(w, hr)
	return w
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]{32})"`)

// login logs in and returns the session cookie and its CSRF token.
func (h *harness) login() (cookie, csrf string) {
	h.t.Helper()
	w := h.do(req{method: "POST", path: "/login", form: url.Values{"password": {testPassword}}})
	if w.Code != http.StatusSeeOther {
		h.t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	cookie = sessionCookie(h.t, w)
	page := h.do(req{method: "GET", path: "/settings/dhcp", cookie: cookie})
	m := csrfRE.FindStringSubmatch(page.Body.String())
	if m == nil {
		h.t.Fatalf("no CSRF token on the DHCP page:\n%s", page.Body)
	}
	return cookie, m[1]
}

func sessionCookie(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == cookieName && c.MaxAge >= 0 {
			return c.Value
		}
	}
	t.Fatalf("no session cookie in %v", w.Header())
	return ""
}

// writeEndpoint is one state-changing request with valid input, and how
// to see that it changed something.
type writeEndpoint struct {
	path string
	form func(h *harness) url.Values
}

func writeEndpoints() []writeEndpoint {
	return []writeEndpoint{
		{"/logout", func(*harness) url.Values { return url.Values{} }},
		{"/settings/lan", func(*harness) url.Values {
			return url.Values{"ipaddr": {"10.9.0.1"}, "netmask": {"255.255.0.0"}}
		}},
		{"/settings/dhcp", func(*harness) url.Values {
			return url.Values{"start": {"120"}, "limit": {"50"}, "leasetime": {"2h"}}
		}},
		{"/settings/wifi", func(*harness) url.Values {
			return url.Values{"ssid": {"home"}, "encryption": {"psk2"}, "key": {"new passphrase"}}
		}},
		{"/settings/forwards/add", func(*harness) url.Values {
			return url.Values{"name": {"ssh"}, "proto": {"tcp+udp"}, "src_dport": {"2222"}, "dest_ip": {"192.168.1.20"}, "dest_port": {"22"}}
		}},
		{"/settings/forwards/delete", func(h *harness) url.Values {
			sec := h.store.Sections("firewall", "redirect")[0]
			return url.Values{"id": {sec.ID}, "fp": {fingerprint(sec)}}
		}},
		{"/settings/ssh/add", func(*harness) url.Values { return url.Values{"key": {testKey(2)}} }},
		{"/settings/ssh/delete", func(*harness) url.Values { return url.Values{"key": {testKey(1)}} }},
		{"/reboot", func(*harness) url.Values { return url.Values{"confirm": {"yes"}} }},
	}
}

// state is everything a write could change.
type state struct {
	committed, staged  string
	commits, mutations int
	reboots            int32
	sessions           int
	passwordSets       int
}

func (h *harness) state() state {
	var s state
	s.committed, s.staged, s.commits, s.mutations = h.store.snapshot()
	s.reboots = h.reboots.Load()
	s.sessions = h.ui.sessions.count()
	h.auth.mu.Lock()
	s.passwordSets = h.auth.sets
	h.auth.mu.Unlock()
	return s
}

// TestWriteEndpointsWork is the control for the refusal tests: with a
// session and its token each request does change the state.
func TestWriteEndpointsWork(t *testing.T) {
	for _, ep := range writeEndpoints() {
		t.Run(strings.ReplaceAll(ep.path, "/", "_"), func(t *testing.T) {
			h := newHarness(t)
			cookie, csrf := h.login()
			before := h.state()
			f := ep.form(h)
			f.Set(csrfField, csrf)
			w := h.do(req{method: "POST", path: ep.path, form: f, cookie: cookie})
			if w.Code != http.StatusSeeOther && w.Code != http.StatusOK {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			after := h.state()
			if after == before {
				t.Fatalf("nothing changed")
			}
			if after.staged != after.committed {
				t.Errorf("changes left staged:\n%s", after.staged)
			}
		})
	}
}

func TestWriteEndpointsRefuseWithoutSession(t *testing.T) {
	for _, ep := range writeEndpoints() {
		t.Run(strings.ReplaceAll(ep.path, "/", "_"), func(t *testing.T) {
			h := newHarness(t)
			_, csrf := h.login() // a valid token, but no cookie sent with it
			before := h.state()
			for _, c := range []struct {
				name, cookie, accept string
				want                 int
			}{
				{"no cookie, browser", "", "text/html,*/*", http.StatusSeeOther},
				{"no cookie, API client", "", "", http.StatusUnauthorized},
				{"forged cookie", strings.Repeat("ab", 16), "", http.StatusUnauthorized},
				{"malformed cookie", "x", "text/html", http.StatusSeeOther},
			} {
				f := ep.form(h)
				f.Set(csrfField, csrf)
				w := h.do(req{method: "POST", path: ep.path, form: f, cookie: c.cookie, header: map[string]string{"Accept": c.accept}})
				if w.Code != c.want {
					t.Errorf("%s: status %d, want %d", c.name, w.Code, c.want)
				}
				if c.want == http.StatusSeeOther && w.Header().Get("Location") != "/login" {
					t.Errorf("%s: redirected to %q, want /login", c.name, w.Header().Get("Location"))
				}
				if after := h.state(); after != before {
					t.Fatalf("%s: state changed:\nbefore %+v\nafter  %+v", c.name, before, after)
				}
			}
		})
	}
}

func TestWriteEndpointsRefuseBadCSRF(t *testing.T) {
	for _, ep := range writeEndpoints() {
		t.Run(strings.ReplaceAll(ep.path, "/", "_"), func(t *testing.T) {
			h := newHarness(t)
			cookie, csrf := h.login()
			_, otherCSRF := h.login() // another session's valid token
			before := h.state()
			forged := []byte(csrf)
			forged[0] ^= 1
			for _, c := range []struct {
				name, token string
				header      map[string]string
			}{
				{"missing", "", nil},
				{"forged", string(forged), nil},
				{"other session's", otherCSRF, nil},
				{"prefix", csrf[:16], nil},
				{"valid token, cross-origin", csrf, map[string]string{"Origin": "http://evil.example"}},
				{"valid token, cross-site referer", csrf, map[string]string{"Referer": "http://evil.example/x"}},
				{"valid token, null origin", csrf, map[string]string{"Origin": "null"}},
			} {
				f := ep.form(h)
				if c.token != "" {
					f.Set(csrfField, c.token)
				}
				w := h.do(req{method: "POST", path: ep.path, form: f, cookie: cookie, header: c.header})
				if w.Code != http.StatusForbidden {
					t.Errorf("%s token: status %d, want 403", c.name, w.Code)
				}
				if after := h.state(); after != before {
					t.Fatalf("%s token: state changed:\nbefore %+v\nafter  %+v", c.name, before, after)
				}
			}
			// Same-origin headers are accepted.
			f := ep.form(h)
			f.Set(csrfField, csrf)
			w := h.do(req{method: "POST", path: ep.path, form: f, cookie: cookie,
				header: map[string]string{"Origin": "http://192.168.1.1", "Referer": "http://192.168.1.1" + ep.path}})
			if w.Code == http.StatusForbidden {
				t.Errorf("same-origin POST refused: %s", w.Body)
			}
		})
	}
}

func TestWrongMethods(t *testing.T) {
	h := newHarness(t)
	cookie, _ := h.login()
	before := h.state()
	for _, ep := range writeEndpoints() {
		methods := []string{"PUT", "DELETE", "PATCH"}
		if routes[ep.path].get == nil {
			methods = append(methods, "GET", "HEAD")
		}
		for _, m := range methods {
			for _, ck := range []string{"", cookie} {
				w := h.do(req{method: m, path: ep.path, cookie: ck})
				if w.Code != http.StatusMethodNotAllowed {
					t.Errorf("%s %s: status %d, want 405", m, ep.path, w.Code)
				}
				if !strings.Contains(w.Header().Get("Allow"), "POST") {
					t.Errorf("%s %s: Allow %q", m, ep.path, w.Header().Get("Allow"))
				}
			}
		}
	}
	for _, p := range []string{"/", "/status.json"} {
		if w := h.do(req{method: "POST", path: p, form: url.Values{}, cookie: cookie}); w.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: status %d, want 405", p, w.Code)
		}
	}
	// GET of every page changes nothing.
	for p := range routes {
		if routes[p].get != nil {
			h.do(req{method: "GET", path: p + "?saved=1&confirm=yes&start=1", cookie: cookie})
		}
	}
	if after := h.state(); after != before {
		t.Fatalf("state changed by GET/other methods:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestSettingsPagesNeedLogin(t *testing.T) {
	h := newHarness(t)
	for p, rt := range routes {
		if !rt.auth || rt.get == nil {
			continue
		}
		w := h.do(req{method: "GET", path: p, header: map[string]string{"Accept": "text/html"}})
		if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/login?next="+url.QueryEscape(p) {
			t.Errorf("GET %s: %d to %q", p, w.Code, w.Header().Get("Location"))
		}
	}
	for _, p := range []string{"/", "/status.json", "/login"} {
		if w := h.do(req{method: "GET", path: p}); w.Code != http.StatusOK {
			t.Errorf("GET %s without login: %d", p, w.Code)
		}
	}
	if w := h.do(req{method: "GET", path: "/debug/pprof/"}); w.Code != http.StatusNotFound {
		t.Errorf("/debug/pprof/: %d", w.Code)
	}
}

func TestLogin(t *testing.T) {
	h := newHarness(t)
	src := netip.MustParseAddr("192.168.1.100")
	w := h.do(req{method: "POST", path: "/login", form: url.Values{"password": {"wrong"}}})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "Wrong password") {
		t.Fatalf("wrong password: %d %s", w.Code, w.Body)
	}
	if len(w.Result().Cookies()) != 0 {
		t.Errorf("wrong password set a cookie")
	}
	if n := h.limiter.failed(src); n != 1 {
		t.Errorf("limiter failures %d, want 1", n)
	}
	// A success resets the count and leads to the page asked for.
	w = h.do(req{method: "POST", path: "/login", form: url.Values{"password": {testPassword}, "next": {"/settings/wifi"}}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings/wifi" {
		t.Fatalf("login: %d to %q", w.Code, w.Header().Get("Location"))
	}
	c := w.Result().Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure || len(c.Value) != 32 {
		t.Errorf("cookie %+v", c)
	}
	if n := h.limiter.failed(src); n != 0 {
		t.Errorf("limiter failures %d after a success", n)
	}
	// Open redirects are refused.
	for _, next := range []string{"//evil.example/", "http://evil.example/", "/logout", "/status.json", "/settings/forwards/add"} {
		w = h.do(req{method: "POST", path: "/login", form: url.Values{"password": {testPassword}, "next": {next}}})
		if loc := w.Header().Get("Location"); loc != "/" {
			t.Errorf("next %q: redirected to %q", next, loc)
		}
	}
	// The limiter refuses after 3 failures, even the right password.
	for range 3 {
		h.do(req{method: "POST", path: "/login", form: url.Values{"password": {"guess"}}})
	}
	w = h.do(req{method: "POST", path: "/login", form: url.Values{"password": {testPassword}}})
	if w.Code != http.StatusTooManyRequests || len(w.Result().Cookies()) != 0 {
		t.Fatalf("locked-out source: %d, cookies %v", w.Code, w.Result().Cookies())
	}
}

func TestFirstBootLogin(t *testing.T) {
	h := newHarness(t)
	h.auth.password = ""
	src := netip.MustParseAddr("192.168.1.100")
	w := h.do(req{method: "GET", path: "/login"})
	if !strings.Contains(w.Body.String(), `name=token`) {
		t.Fatalf("first-boot login page without a setup token field:\n%s", w.Body)
	}
	// Mistyped repetition and short password: refused, not counted.
	for _, f := range []url.Values{
		{"token": {h.auth.token}, "password": {"long enough 1"}, "password2": {"long enough 2"}},
		{"token": {h.auth.token}, "password": {"short"}, "password2": {"short"}},
	} {
		if w := h.do(req{method: "POST", path: "/login", form: f}); w.Code != http.StatusUnprocessableEntity {
			t.Errorf("%v: %d", f, w.Code)
		}
	}
	// Wrong token: refused and counted.
	w = h.do(req{method: "POST", path: "/login", form: url.Values{"token": {"guess"}, "password": {"new password"}, "password2": {"new password"}}})
	if w.Code != http.StatusUnauthorized || h.auth.PasswordSet() || h.limiter.failed(src) != 1 {
		t.Fatalf("wrong token: %d, password set %v, failures %d", w.Code, h.auth.PasswordSet(), h.limiter.failed(src))
	}
	if len(w.Result().Cookies()) != 0 {
		t.Errorf("wrong token set a cookie")
	}
	w = h.do(req{method: "POST", path: "/login", form: url.Values{"token": {h.auth.token}, "password": {"new password"}, "password2": {"new password"}}})
	if w.Code != http.StatusSeeOther || !h.auth.Check("new password") {
		t.Fatalf("setup: %d %s", w.Code, w.Body)
	}
	cookie := sessionCookie(t, w)
	if w := h.do(req{method: "GET", path: "/settings/dhcp", cookie: cookie}); w.Code != http.StatusOK {
		t.Errorf("after setup: %d", w.Code)
	}
	// Now the normal form.
	if w := h.do(req{method: "GET", path: "/login"}); strings.Contains(w.Body.String(), "name=token") {
		t.Errorf("setup form after the password was set")
	}
}

func TestSessionExpiryAndLogout(t *testing.T) {
	h := newHarness(t)
	cookie, csrf := h.login()
	get := func() int { return h.do(req{method: "GET", path: "/settings/lan", cookie: cookie}).Code }
	h.clock.Advance(DefaultSessionIdle - time.Second)
	if c := get(); c != http.StatusOK {
		t.Fatalf("before the idle time: %d", c)
	}
	h.clock.Advance(DefaultSessionIdle - time.Second) // the request above renewed it
	if c := get(); c != http.StatusOK {
		t.Fatalf("renewed session: %d", c)
	}
	// The overview's polling does not keep the session alive.
	for range 2 * int(DefaultSessionIdle/time.Minute) {
		h.clock.Advance(time.Minute / 2)
		h.do(req{method: "GET", path: "/status.json", cookie: cookie})
	}
	if c := get(); c != http.StatusUnauthorized {
		t.Fatalf("idle session: %d, want 401", c)
	}
	if n := h.ui.sessions.count(); n != 0 {
		t.Errorf("%d sessions after expiry", n)
	}

	cookie, csrf = h.login()
	w := h.do(req{method: "POST", path: "/logout", form: url.Values{csrfField: {csrf}}, cookie: cookie})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("logout: %d", w.Code)
	}
	if c := w.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Errorf("logout cookies %v", c)
	}
	if c := get(); c != http.StatusUnauthorized {
		t.Fatalf("after logout: %d", c)
	}
}

func TestSessionTableBounded(t *testing.T) {
	h := newHarness(t)
	first, _ := h.login()
	for range maxSessions {
		h.clock.Advance(time.Second)
		h.login()
	}
	if n := h.ui.sessions.count(); n != maxSessions {
		t.Errorf("%d sessions, want %d", n, maxSessions)
	}
	if w := h.do(req{method: "GET", path: "/settings/lan", cookie: first}); w.Code != http.StatusUnauthorized {
		t.Errorf("oldest session still valid: %d", w.Code)
	}
}

func TestEscaping(t *testing.T) {
	h := newHarness(t)
	hostile := `<script>alert(1)</script>"'&`
	h.src.hostname = hostile
	body := h.do(req{method: "GET", path: "/"}).Body.String()
	if strings.Contains(body, "<script>alert") || strings.Contains(body, `"'&`) {
		t.Fatalf("hostile host name unescaped:\n%s", body)
	}
	want := "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;"
	if n := strings.Count(body, want); n != 2 { // the lease table and the log line
		t.Errorf("escaped host name %d times, want 2", n)
	}
	if n := strings.Count(body, "<script>"); n != 1 {
		t.Errorf("%d script elements, want the page's own", n)
	}
	// A hostile value in a form is shown escaped, in the error and the input.
	cookie, csrf := h.login()
	w := h.do(req{method: "POST", path: "/settings/forwards/add", cookie: cookie, form: url.Values{csrfField: {csrf},
		"name": {`"><script>x()</script>`}, "proto": {"tcp"}, "src_dport": {`<b>`}, "dest_ip": {"192.168.1.5"}}})
	if w.Code != http.StatusUnprocessableEntity || strings.Contains(w.Body.String(), "<script>x") || !strings.Contains(w.Body.String(), `value="&lt;b&gt;"`) {
		t.Fatalf("%d:\n%s", w.Code, w.Body)
	}
	if !strings.Contains(w.Body.String(), `value="&#34;&gt;&lt;script&gt;x()&lt;/script&gt;"`) {
		t.Errorf("input not kept escaped:\n%s", w.Body)
	}
}

func TestStatusJSON(t *testing.T) {
	h := newHarness(t)
	w := h.do(req{method: "GET", path: "/status.json"})
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, w.Body)
	}
	var details fakeDetails
	if err := json.Unmarshal(w.Body.Bytes(), &details); err != nil || details.Board != "malta" || len(details.Ports) != 1 {
		t.Errorf("details: %+v %v", details, err)
	}
	for _, k := range []string{"board", "uptime", "ports", "overview"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("member %q missing", k)
		}
	}
	var o Overview
	if err := json.Unmarshal(doc["overview"], &o); err != nil {
		t.Fatal(err)
	}
	if o.System.Hostname != "gowrt" || o.WAN.Addr.String() != "203.0.113.7/24" || o.Ports[0].RxBytes == 0 || o.Leases[0].Addr.String() != "192.168.1.100" {
		t.Errorf("overview %+v", o)
	}

	for _, c := range []struct {
		details any
		want    string
	}{
		{struct{}{}, `{"overview":`},
		{nil, `{"details":null,"overview":`},
		{[]int{1}, `{"details":[1],"overview":`},
	} {
		b, err := statusDocument(c.details, Overview{})
		if err != nil || !strings.HasPrefix(string(b), c.want) || !json.Valid(b) {
			t.Errorf("%v: %s %v", c.details, b, err)
		}
	}
}

var scriptRE = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
var styleRE = regexp.MustCompile(`(?s)<style>(.*?)</style>`)

func TestSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	cookie, _ := h.login()
	for _, p := range []string{"/", "/status.json", "/login", "/settings/dhcp", "/nope"} {
		w := h.do(req{method: "GET", path: p, cookie: cookie})
		for k, v := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "same-origin", "Cache-Control": "no-store"} {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s: %s %q, want %q", p, k, got, v)
			}
		}
		csp := w.Header().Get("Content-Security-Policy")
		if strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		// Every inline script and style on the page is allowed by hash.
		for _, re := range []*regexp.Regexp{scriptRE, styleRE} {
			for _, m := range re.FindAllStringSubmatch(w.Body.String(), -1) {
				sum := sha256.Sum256([]byte(m[1]))
				if !strings.Contains(csp, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
					t.Errorf("%s: inline element not in the CSP", p)
				}
			}
		}
		if strings.Contains(w.Body.String(), " style=") {
			t.Errorf("%s: style attribute (the CSP forbids it)", p)
		}
	}
}

func TestSaveErrorsRevert(t *testing.T) {
	h := newHarness(t)
	cookie, csrf := h.login()
	before := h.state()
	// Passes the page's checks, fails the store's Commit (pool too big):
	// the error is shown, the input kept, nothing left staged.
	w := h.do(req{method: "POST", path: "/settings/dhcp", cookie: cookie, form: url.Values{csrfField: {csrf},
		"start": {"300"}, "limit": {"100"}, "leasetime": {"12h"}}})
	body := w.Body.String()
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(body, "does not fit the LAN subnet") ||
		!strings.Contains(body, `name="start" type=number value="300"`) {
		t.Fatalf("%d:\n%s", w.Code, body)
	}
	after := h.state()
	if after.committed != before.committed || after.staged != before.committed || after.commits != before.commits {
		t.Fatalf("refused save left changes:\n%s", after.staged)
	}
	// Fails the store's Set (start out of range) after an earlier Set.
	w = h.do(req{method: "POST", path: "/settings/dhcp", cookie: cookie, form: url.Values{csrfField: {csrf},
		"start": {"10"}, "limit": {"5000"}, "leasetime": {"12h"}}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "dhcp.lan.limit") {
		t.Fatalf("%d:\n%s", w.Code, w.Body)
	}
	if s := h.state(); s.staged != before.committed {
		t.Fatalf("refused Set left changes:\n%s", s.staged)
	}
	// Fails the page's own checks: the store is not called.
	m := h.state().mutations
	w = h.do(req{method: "POST", path: "/settings/lan", cookie: cookie, form: url.Values{csrfField: {csrf},
		"ipaddr": {"300.1.1.1"}, "netmask": {"255.0.255.0"}}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "not an IPv4 address") ||
		!strings.Contains(w.Body.String(), "not a contiguous netmask") {
		t.Fatalf("%d:\n%s", w.Code, w.Body)
	}
	if h.state().mutations != m {
		t.Errorf("store called for invalid input")
	}
	// A good save is committed and shown.
	w = h.do(req{method: "POST", path: "/settings/dhcp", cookie: cookie, form: url.Values{csrfField: {csrf},
		"start": {"120"}, "limit": {"100"}, "leasetime": {"1d"}}})
	if w.Code != http.StatusSeeOther || h.store.committedValue("dhcp.lan.start") != "120" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	page := h.do(req{method: "GET", path: w.Header().Get("Location"), cookie: cookie}).Body.String()
	if !strings.Contains(page, `value="120"`) || !strings.Contains(page, "Saved and applied") {
		t.Errorf("saved page:\n%s", page)
	}
}

func TestWifi(t *testing.T) {
	h := newHarness(t)
	cookie, csrf := h.login()
	page := h.do(req{method: "GET", path: "/settings/wifi", cookie: cookie}).Body.String()
	if strings.Contains(page, "correct horse") {
		t.Fatalf("passphrase sent to the browser")
	}
	post := func(ssid, enc, key string) *httptest.ResponseRecorder {
		return h.do(req{method: "POST", path: "/settings/wifi", cookie: cookie, form: url.Values{csrfField: {csrf},
			"ssid": {ssid}, "encryption": {enc}, "key": {key}}})
	}
	for _, c := range []struct{ ssid, enc, key, err string }{
		{"home", "psk2", "short", "8 to 63"},
		{"home", "psk2", strings.Repeat("k", 64), "8 to 63"},
		{"home", "wep", "", "choose one of"},
		{strings.Repeat("s", 33), "psk2", "", "1 to 32 bytes"},
		{"", "none", "", "1 to 32 bytes"},
	} {
		w := post(c.ssid, c.enc, c.key)
		if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), c.err) {
			t.Errorf("%+v: %d, want error %q", c, w.Code, c.err)
		}
		if strings.Contains(w.Body.String(), "correct horse") || (c.key != "" && strings.Contains(w.Body.String(), c.key)) {
			t.Errorf("%+v: passphrase echoed", c)
		}
	}
	if w := post("home", "psk2", ""); w.Code != http.StatusSeeOther {
		t.Fatalf("keep passphrase: %d %s", w.Code, w.Body)
	}
	if h.store.committedValue(wifiPrefix+"ssid") != "home" || h.store.committedValue(wifiPrefix+"key") != "correct horse" {
		t.Errorf("after keeping the passphrase: %s", h.state().committed)
	}
	if w := post("home", "psk2", "a new passphrase"); w.Code != http.StatusSeeOther || h.store.committedValue(wifiPrefix+"key") != "a new passphrase" {
		t.Fatalf("new passphrase: %d", w.Code)
	}
}

func TestForwards(t *testing.T) {
	h := newHarness(t)
	cookie, csrf := h.login()
	w := h.do(req{method: "POST", path: "/settings/forwards/add", cookie: cookie, form: url.Values{csrfField: {csrf},
		"name": {"game"}, "proto": {"tcp+udp"}, "src_dport": {"27015-27030"}, "dest_ip": {"192.168.1.30"}}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("add: %d %s", w.Code, w.Body)
	}
	secs := h.store.Sections("firewall", "redirect")
	if len(secs) != 2 {
		t.Fatalf("%d redirects", len(secs))
	}
	got := secs[1].Options
	for k, v := range map[string]string{"name": "game", "src": "wan", "dest": "lan", "target": "DNAT", "proto": "tcp udp",
		"src_dport": "27015-27030", "dest_ip": "192.168.1.30", "dest_port": "27015-27030"} {
		if strings.Join(got[k], " ") != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	page := h.do(req{method: "GET", path: "/settings/forwards", cookie: cookie}).Body.String()
	if !strings.Contains(page, "<td>game</td>") || !strings.Contains(page, "<td>web</td>") {
		t.Errorf("page:\n%s", page)
	}
	for _, bad := range []url.Values{
		{"name": {"x"}, "proto": {"icmp"}, "src_dport": {"1"}, "dest_ip": {"192.168.1.3"}},
		{"name": {"x"}, "proto": {"tcp"}, "src_dport": {"0"}, "dest_ip": {"192.168.1.3"}},
		{"name": {"x"}, "proto": {"tcp"}, "src_dport": {"20-10"}, "dest_ip": {"192.168.1.3"}},
		{"name": {"x"}, "proto": {"tcp"}, "src_dport": {"70000"}, "dest_ip": {"192.168.1.3"}},
		{"name": {"x"}, "proto": {"tcp"}, "src_dport": {"80"}, "dest_ip": {"fe80::1"}},
		{"name": {""}, "proto": {"tcp"}, "src_dport": {"80"}, "dest_ip": {"192.168.1.3"}},
	} {
		bad.Set(csrfField, csrf)
		if w := h.do(req{method: "POST", path: "/settings/forwards/add", cookie: cookie, form: bad}); w.Code != http.StatusUnprocessableEntity {
			t.Errorf("%v: %d", bad, w.Code)
		}
	}
	// Deleting by a stale index is refused: the fingerprint names the content.
	stale := url.Values{csrfField: {csrf}, "id": {secs[0].ID}, "fp": {fingerprint(secs[1])}}
	if w := h.do(req{method: "POST", path: "/settings/forwards/delete", cookie: cookie, form: stale}); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("stale delete: %d", w.Code)
	}
	if n := len(h.store.Sections("firewall", "redirect")); n != 2 {
		t.Fatalf("stale delete removed a section")
	}
	del := url.Values{csrfField: {csrf}, "id": {secs[1].ID}, "fp": {fingerprint(secs[1])}}
	if w := h.do(req{method: "POST", path: "/settings/forwards/delete", cookie: cookie, form: del}); w.Code != http.StatusSeeOther {
		t.Errorf("delete: %d", w.Code)
	}
	if secs := h.store.Sections("firewall", "redirect"); len(secs) != 1 || secs[0].Options["name"][0] != "web" {
		t.Errorf("after delete: %+v", secs)
	}
}

func TestSSHKeys(t *testing.T) {
	h := newHarness(t)
	cookie, csrf := h.login()
	page := h.do(req{method: "GET", path: "/settings/ssh", cookie: cookie}).Body.String()
	_, comment, fp, err := parseSSHKey(testKey(1))
	if err != nil || !strings.Contains(page, fp) || !strings.Contains(page, comment) {
		t.Fatalf("%v: key %s not listed:\n%s", err, fp, page)
	}
	for _, bad := range []string{"", "ssh-ed25519", "ssh-dss AAAA", "ssh-ed25519 !!!", "ssh-rsa " + strings.Fields(testKey(1))[1],
		testKey(1), testKey(2) + "\nssh-ed25519 x"} {
		w := h.do(req{method: "POST", path: "/settings/ssh/add", cookie: cookie, form: url.Values{csrfField: {csrf}, "key": {bad}}})
		if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "Key not added") {
			t.Errorf("%q: %d", bad, w.Code)
		}
	}
	if _, staged, _, _ := h.store.snapshot(); strings.Count(staged, "ssh-ed25519") != 1 {
		t.Fatalf("bad keys stored:\n%s", staged)
	}
	w := h.do(req{method: "POST", path: "/settings/ssh/add", cookie: cookie, form: url.Values{csrfField: {csrf}, "key": {" " + testKey(3) + "\n"}}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("add: %d %s", w.Code, w.Body)
	}
	if keys, _ := h.store.GetList(sshKeysKey); len(keys) != 2 || keys[1] != testKey(3) {
		t.Errorf("keys %q", keys)
	}
}

func TestReboot(t *testing.T) {
	h := newHarness(t)
	cookie, csrf := h.login()
	if w := h.do(req{method: "POST", path: "/reboot", cookie: cookie, form: url.Values{csrfField: {csrf}}}); w.Code != http.StatusBadRequest || h.reboots.Load() != 0 {
		t.Errorf("unconfirmed reboot: %d, %d reboots", w.Code, h.reboots.Load())
	}
	if w := h.do(req{method: "POST", path: "/reboot", cookie: cookie, form: url.Values{csrfField: {csrf}, "confirm": {"yes"}}}); w.Code != http.StatusOK || h.reboots.Load() != 1 {
		t.Errorf("reboot: %d, %d reboots", w.Code, h.reboots.Load())
	}
}

func TestOverviewWithoutJavaScript(t *testing.T) {
	h := newHarness(t)
	body := h.do(req{method: "GET", path: "/"}).Body.String()
	for _, want := range []string{"malta", "v0.test", "1h 30m 5s", "25 %", "5.0 MiB", "11.0 MiB", ">42<",
		"203.0.113.7/24", "203.0.113.1", "203.0.113.53", "0h 50m 0s", "192.168.1.1/24", "laptop", "192.168.1.100",
		"up 100 Mbit/s", "rx-crc 3", "no-route", "backoff", "dhcpd: lease", `id=grx0`,
		"02:00:00:00:00:77", "-61 dBm", "144.4 Mbit/s", "13 %"} {
		if !strings.Contains(body, want) {
			t.Errorf("overview lacks %q", want)
		}
	}
}
