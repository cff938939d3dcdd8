// Package web is the router's web UI: an overview of the router's state
// (readable without a login, as LuCI's status page is on the LAN), its
// numbers as JSON for the page's live graphs, and settings pages that
// change the configuration once the administrator has logged in.
//
// Pages are built by hand (see markup in html.go) rather than with
// html/template, which would add about 3.7 MB to the firmware image.
// Every change is a POST that needs a session cookie and the session's
// CSRF token; a GET never changes anything. The UI holds no router state
// of its own beyond its sessions: it reads the router through Source and
// the configuration through ConfigStore, and a commit there is what
// applies a change.
package web

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"time"
)

// Overview is what the status page shows. /status.json is the JSON object
// of Source.Details() with one more top-level member "overview": Overview.
type Overview struct {
	System   System            `json:"system"`
	WAN      WAN               `json:"wan"`
	LAN      LAN               `json:"lan"`
	Leases   []Lease           `json:"leases"`
	Ports    []Port            `json:"ports"`
	Stations []Station         `json:"stations"` // Wi-Fi clients; none yet
	Drops    map[string]uint64 `json:"drops"`    // router-wide drops by reason
	Log      []string          `json:"log"`      // recent log lines, oldest first
	Services []Service         `json:"services"`
}

// System is the board and the firmware's own state.
type System struct {
	Board      string        `json:"board"`
	Version    string        `json:"version"`
	Hostname   string        `json:"hostname"`
	Uptime     time.Duration `json:"uptime_ns"`
	Busy       float64       `json:"busy"` // CPU busy fraction 0..1 (0 if unknown)
	MemUsed    uint64        `json:"mem_used"`
	MemFree    uint64        `json:"mem_free"`
	Goroutines int           `json:"goroutines"`
}

// WAN is the uplink's address and where it came from.
type WAN struct {
	Up        bool          `json:"up"`
	Proto     string        `json:"proto"` // "dhcp" or "static"
	Addr      netip.Prefix  `json:"addr"`
	Gateway   netip.Addr    `json:"gateway"`
	DNS       []netip.Addr  `json:"dns"`
	LeaseLeft time.Duration `json:"lease_left_ns"` // 0 for static
}

// LAN is the router's LAN address.
type LAN struct {
	Addr netip.Prefix `json:"addr"`
}

// Lease is one DHCP lease on the LAN.
type Lease struct {
	Hostname string     `json:"hostname"`
	MAC      string     `json:"mac"`
	Addr     netip.Addr `json:"addr"`
	Expires  time.Time  `json:"expires"` // zero: static
}

// Port is one Ethernet port's link and traffic.
type Port struct {
	Name      string            `json:"name"`
	Role      string            `json:"role"` // "lan" or "wan"
	Link      bool              `json:"link"`
	SpeedMbps int               `json:"speed_mbps"`
	RxBytes   uint64            `json:"rx_bytes"`
	TxBytes   uint64            `json:"tx_bytes"`
	RxPackets uint64            `json:"rx_packets"`
	TxPackets uint64            `json:"tx_packets"`
	Drops     map[string]uint64 `json:"drops"`
}

// Station is one associated Wi-Fi client.
type Station struct {
	MAC      string  `json:"mac"`
	Signal   int     `json:"signal"` // dBm
	RateMbps float64 `json:"rate_mbps"`
	Airtime  float64 `json:"airtime"` // fraction 0..1
}

// Service is one supervised service's state.
type Service struct {
	Name     string `json:"name"`
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
}

// Source is the router as the UI sees it.
type Source interface {
	Overview() Overview
	// Details is the router's full status (router.Status), marshalled
	// as the base of /status.json.
	Details() any
}

// Section is one configuration section (cfg.Section).
type Section struct {
	ID, Type string
	Options  map[string][]string
}

// ConfigStore is the configuration the settings pages change (the lead
// adapts *cfg.Config). Changes are staged by Set and friends and take
// effect at Commit; Revert drops them.
type ConfigStore interface {
	Get(key string) (string, error)
	Set(key, value string) error
	Unset(key string) error
	AddList(key, value string) error
	DelList(key, value string) error
	GetList(key string) ([]string, error)
	AddSection(pkg, typ string) (string, error)
	DeleteSection(pkg, id string) error
	Sections(pkg, typ string) []Section
	Commit() ([]string, error)
	Revert()
}

// Auth is the administrator password (*auth.Auth).
type Auth interface {
	PasswordSet() bool
	Check(pw string) bool
	SetPassword(proof, pw string) error
}

// Limiter refuses sources with too many failed logins (*auth.Limiter).
type Limiter interface {
	Allow(netip.Addr) bool
	Failed(netip.Addr)
	Succeeded(netip.Addr)
}

// Config is what New needs.
type Config struct {
	Source  Source      // required
	Config  ConfigStore // required
	Auth    Auth        // required
	Limiter Limiter     // nil: logins are not rate limited
	Reboot  func() error
	// Upgrade writes uploaded firmware; nil: the upgrade page says the
	// board has none.
	Upgrade Upgrader
	Log     *slog.Logger     // nil: discarded
	Now     func() time.Time // nil: time.Now
	// SessionIdle is how long a session lasts without a request; 0 means
	// DefaultSessionIdle.
	SessionIdle time.Duration
}

// DefaultSessionIdle is LuCI's default session timeout (luci.sauth
// sessiontime, 3600 s) cut to a quarter: a router admin page left open
// on a shared machine should not stay usable for an hour.
const DefaultSessionIdle = 15 * time.Minute

// UI is the web UI, an http.Handler.
type UI struct {
	src      Source
	store    ConfigStore
	auth     Auth
	limiter  Limiter
	reboot   func() error
	upgrader Upgrader
	log      *slog.Logger
	sessions *sessions
}

// New returns the UI for c.
func New(c Config) (*UI, error) {
	if c.Source == nil || c.Config == nil || c.Auth == nil {
		return nil, errors.New("web: Source, Config and Auth are required")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.SessionIdle <= 0 {
		c.SessionIdle = DefaultSessionIdle
	}
	return &UI{src: c.Source, store: c.Config, auth: c.Auth, limiter: c.Limiter, reboot: c.Reboot, upgrader: c.Upgrade, log: c.Log,
		sessions: newSessions(c.Now, c.SessionIdle)}, nil
}

// route is one page: get renders it (nil: POST only), post changes
// something (nil: read only). A page with auth set needs a session for
// both.
type route struct {
	auth bool
	// anonymous pages ignore the session: the overview's script polls
	// /status.json every 2 s, which must not keep a session alive
	// past its idle time.
	anonymous bool
	// upload pages read their own (multipart, streamed) body and check
	// the CSRF token in it themselves.
	upload bool
	get    func(u *UI, w http.ResponseWriter, r *http.Request, s *session)
	post   func(u *UI, w http.ResponseWriter, r *http.Request, s *session)
}

var routes map[string]route

func init() {
	// Set in init: the handlers refer to routes (for the login's next page).
	routes = map[string]route{
		"/":                         {get: (*UI).overviewPage},
		"/status.json":              {anonymous: true, get: (*UI).statusJSON},
		"/login":                    {get: (*UI).loginPage, post: (*UI).login},
		"/logout":                   {auth: true, post: (*UI).logout},
		"/settings/lan":             {auth: true, get: (*UI).lanPage, post: (*UI).lanSave},
		"/settings/dhcp":            {auth: true, get: (*UI).dhcpPage, post: (*UI).dhcpSave},
		"/settings/wifi":            {auth: true, get: (*UI).wifiPage, post: (*UI).wifiSave},
		"/settings/forwards":        {auth: true, get: (*UI).forwardsPage},
		"/settings/forwards/add":    {auth: true, post: (*UI).forwardAdd},
		"/settings/forwards/delete": {auth: true, post: (*UI).forwardDelete},
		"/settings/ssh":             {auth: true, get: (*UI).sshPage},
		"/settings/ssh/add":         {auth: true, post: (*UI).sshAdd},
		"/settings/ssh/delete":      {auth: true, post: (*UI).sshDelete},
		"/reboot":                   {auth: true, get: (*UI).rebootPage, post: (*UI).rebootNow},
		"/system/upgrade":           {auth: true, upload: true, get: (*UI).upgradePage, post: (*UI).upgradeUpload},
	}
}

// maxForm bounds a request body: the largest form is an SSH key (an
// RSA-8192 key line is about 1.4 KB).
const maxForm = 16 << 10

// ServeHTTP serves the UI.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	rt, ok := routes[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	var handle func(u *UI, w http.ResponseWriter, r *http.Request, s *session)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		handle = rt.get
	case http.MethodPost:
		handle = rt.post
	}
	if handle == nil {
		allow := ""
		if rt.get != nil {
			allow = "GET, HEAD"
		}
		if rt.post != nil {
			if allow != "" {
				allow += ", "
			}
			allow += "POST"
		}
		w.Header().Set("Allow", allow)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	post := r.Method == http.MethodPost
	if post && !sameOrigin(r) {
		u.log.Warn("web: cross-origin POST refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "referer", r.Header.Get("Referer"), "src", r.RemoteAddr)
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	var s *session
	if !rt.anonymous {
		s = u.sessions.fromRequest(r)
	}
	if rt.auth && s == nil {
		u.needLogin(w, r)
		return
	}
	if post && rt.upload {
		handle(u, w, r, s)
		return
	}
	if post {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		// The login form has no session yet; every other POST needs one
		// and its token.
		if rt.auth && !s.csrfOK(r.PostForm.Get(csrfField)) {
			u.log.Warn("web: POST with a bad CSRF token refused", "path", r.URL.Path, "src", r.RemoteAddr)
			http.Error(w, "invalid or missing CSRF token; reload the page", http.StatusForbidden)
			return
		}
	}
	handle(u, w, r, s)
}

// needLogin refuses a request without a session: browsers are sent to
// the login page, other clients get 401.
func (u *UI) needLogin(w http.ResponseWriter, r *http.Request) {
	if acceptsHTML(r) {
		next := r.URL.Path
		if r.Method != http.MethodGet {
			next = "" // a refused POST is not replayed after the login
		}
		http.Redirect(w, r, loginURL(next), http.StatusSeeOther)
		return
	}
	w.Header().Set("WWW-Authenticate", `Cookie realm="gowrt"`)
	http.Error(w, "login required", http.StatusUnauthorized)
}
