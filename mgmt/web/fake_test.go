package web

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fakeSource is a router with counters that move at every read.
type fakeSource struct {
	hostname string // lease host name, hostile in the escaping test
	reads    atomic.Uint64
}

func (f *fakeSource) Overview() Overview {
	n := f.reads.Add(1)
	return Overview{
		System: System{Board: "malta", Version: "v0.test", Hostname: "gowrt", Uptime: 90*time.Minute + 5*time.Second,
			Busy: 0.25, MemUsed: 5 << 20, MemFree: 11 << 20, Goroutines: 42},
		WAN: WAN{Up: true, Proto: "dhcp", Addr: netip.MustParsePrefix("203.0.113.7/24"), Gateway: netip.MustParseAddr("203.0.113.1"),
			DNS: []netip.Addr{netip.MustParseAddr("203.0.113.53")}, LeaseLeft: 50 * time.Minute},
		LAN: LAN{Addr: netip.MustParsePrefix("192.168.1.1/24")},
		Leases: []Lease{{Hostname: f.hostname, MAC: "02:00:00:00:00:10", Addr: netip.MustParseAddr("192.168.1.100"),
			Expires: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}},
		Ports: []Port{
			{Name: "wan", Role: "wan", Link: true, SpeedMbps: 100, RxBytes: 1000 + 5000*n, TxBytes: 2000 + 3000*n, RxPackets: 10 * n, TxPackets: 8 * n},
			{Name: "lan1", Role: "lan", Link: false, Drops: map[string]uint64{"rx-crc": 3}},
		},
		Stations: []Station{{MAC: "02:00:00:00:00:77", Signal: -61, RateMbps: 144.4, Airtime: 0.125}},
		Drops:    map[string]uint64{"no-route": 4, "bridge-vlan": 1},
		Log:      []string{"Dec  1 12:00:00 daemon.info dhcpd: lease 192.168.1.100 to " + f.hostname},
		Services: []Service{{Name: "dhcpd", State: "running"}, {Name: "ntp", State: "backoff", Restarts: 2}},
	}
}

// fakeDetails stands in for router.Status.
type fakeDetails struct {
	Board  string `json:"board"`
	Uptime string `json:"uptime"`
	Ports  []struct {
		Name string `json:"name"`
	} `json:"ports"`
}

func (f *fakeSource) Details() any {
	d := fakeDetails{Board: "malta", Uptime: "1h30m5s"}
	d.Ports = append(d.Ports, struct {
		Name string `json:"name"`
	}{"wan"})
	return d
}

// storeState is one view of the fake configuration.
type storeState struct {
	vals      map[string]string
	lists     map[string][]string
	redirects []Section
}

func (s storeState) clone() storeState {
	c := storeState{vals: maps.Clone(s.vals), lists: map[string][]string{}}
	for k, v := range s.lists {
		c.lists[k] = slices.Clone(v)
	}
	for _, r := range s.redirects {
		o := map[string][]string{}
		for k, v := range r.Options {
			o[k] = slices.Clone(v)
		}
		c.redirects = append(c.redirects, Section{Type: r.Type, Options: o})
	}
	return c
}

func (s storeState) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s.vals)) {
		fmt.Fprintf(&b, "%s=%s\n", k, s.vals[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.lists)) {
		fmt.Fprintf(&b, "%s=%q\n", k, s.lists[k])
	}
	for i, r := range s.redirects {
		for _, k := range slices.Sorted(maps.Keys(r.Options)) {
			fmt.Fprintf(&b, "firewall.@redirect[%d].%s=%q\n", i, k, r.Options[k])
		}
	}
	return b.String()
}

// fakeStore is a configuration with a schema of the keys the UI uses,
// a cross-field check at Commit (the DHCP pool starts inside a /24), and a count
// of every call that could change something.
type fakeStore struct {
	mu        sync.Mutex
	committed storeState
	staged    storeState
	commits   int
	mutations int // Set, Unset, AddList, DelList, AddSection, DeleteSection, Commit calls
	reverts   int
}

func newFakeStore() *fakeStore {
	st := storeState{
		vals: map[string]string{
			"network.lan.ipaddr": "192.168.1.1", "network.lan.netmask": "255.255.255.0",
			"dhcp.lan.start": "100", "dhcp.lan.limit": "150", "dhcp.lan.leasetime": "12h",
			"wireless.default_radio0.ssid": "OpenWrt", "wireless.default_radio0.encryption": "psk2",
			"wireless.default_radio0.key": "correct horse",
		},
		lists: map[string][]string{"system.authorized_keys": {testKey(1)}},
		redirects: []Section{{Type: "redirect", Options: map[string][]string{
			"name": {"web"}, "src": {"wan"}, "dest": {"lan"}, "target": {"DNAT"}, "proto": {"tcp"},
			"src_dport": {"8080"}, "dest_ip": {"192.168.1.10"}, "dest_port": {"80"}}}},
	}
	return &fakeStore{committed: st, staged: st.clone()}
}

var redirectOpts = []string{"name", "src", "dest", "target", "proto", "src_dport", "dest_ip", "dest_port"}

func (f *fakeStore) Get(key string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.staged.vals[key]; ok {
		return v, nil
	}
	if l, ok := f.staged.lists[key]; ok {
		return strings.Join(l, " "), nil
	}
	return "", fmt.Errorf("%s: not set", key)
}

func (f *fakeStore) Set(key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	if i, opt, ok := redirectKey(key); ok {
		if i >= len(f.staged.redirects) || !slices.Contains(redirectOpts, opt) {
			return fmt.Errorf("%s: no such option", key)
		}
		f.staged.redirects[i].Options[opt] = strings.Fields(value)
		return nil
	}
	if _, ok := f.staged.vals[key]; !ok {
		return fmt.Errorf("%s: no such option", key)
	}
	switch key {
	case "dhcp.lan.start", "dhcp.lan.limit":
		if n, err := strconv.Atoi(value); err != nil || n < 1 || n > 1000 {
			return fmt.Errorf("%s: %q out of range 1..1000", key, value)
		}
	}
	f.staged.vals[key] = value
	return nil
}

// redirectKey splits "firewall.@redirect[i].opt".
func redirectKey(key string) (int, string, bool) {
	rest, ok := strings.CutPrefix(key, "firewall.@redirect[")
	if !ok {
		return 0, "", false
	}
	num, opt, ok := strings.Cut(rest, "].")
	i, err := strconv.Atoi(num)
	return i, opt, ok && err == nil && i >= 0
}

func (f *fakeStore) Unset(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	return errors.New("unset: not used by the UI")
}

func (f *fakeStore) AddList(key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	if key != "system.authorized_keys" {
		return fmt.Errorf("%s: not a list", key)
	}
	f.staged.lists[key] = append(f.staged.lists[key], value)
	return nil
}

func (f *fakeStore) DelList(key, value string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	l := f.staged.lists[key]
	i := slices.Index(l, value)
	if i < 0 {
		return fmt.Errorf("%s: no value %q", key, value)
	}
	f.staged.lists[key] = slices.Delete(l, i, i+1)
	return nil
}

func (f *fakeStore) GetList(key string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.staged.lists[key]
	if !ok {
		return nil, fmt.Errorf("%s: not a list", key)
	}
	return slices.Clone(l), nil
}

func (f *fakeStore) AddSection(pkg, typ string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	if pkg != "firewall" || typ != "redirect" {
		return "", fmt.Errorf("%s.%s: not supported", pkg, typ)
	}
	f.staged.redirects = append(f.staged.redirects, Section{Type: typ, Options: map[string][]string{}})
	return fmt.Sprintf("@redirect[%d]", len(f.staged.redirects)-1), nil
}

func (f *fakeStore) DeleteSection(pkg, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	i, _, ok := redirectKey(pkg + "." + id + ".x")
	if pkg != "firewall" || !ok || i >= len(f.staged.redirects) {
		return fmt.Errorf("%s.%s: no such section", pkg, id)
	}
	f.staged.redirects = slices.Delete(f.staged.redirects, i, i+1)
	return nil
}

func (f *fakeStore) Sections(pkg, typ string) []Section {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pkg != "firewall" || typ != "redirect" {
		return nil
	}
	c := f.staged.clone()
	for i := range c.redirects {
		c.redirects[i].ID = fmt.Sprintf("@redirect[%d]", i)
	}
	return c.redirects
}

func (f *fakeStore) Commit() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mutations++
	// OpenWrt ends the pool at the subnet's end; it must start inside
	// it (a /24 here).
	if start, _ := strconv.Atoi(f.staged.vals["dhcp.lan.start"]); start > 254 {
		return nil, fmt.Errorf("dhcp.lan.start: pool start %d does not fit the LAN subnet", start)
	}
	for i, r := range f.staged.redirects {
		if len(r.Options["dest_ip"]) == 0 {
			return nil, fmt.Errorf("firewall.@redirect[%d].dest_ip: is required", i)
		}
	}
	if f.staged.String() == f.committed.String() {
		return nil, nil
	}
	f.committed = f.staged.clone()
	f.commits++
	return []string{"changed"}, nil
}

func (f *fakeStore) Revert() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reverts++
	f.staged = f.committed.clone()
}

// snapshot returns the committed and staged configuration as text and
// the call counters.
func (f *fakeStore) snapshot() (committed, staged string, commits, mutations int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.committed.String(), f.staged.String(), f.commits, f.mutations
}

func (f *fakeStore) committedValue(key string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.committed.vals[key]
}

// fakeAuth is auth.Auth's contract: a setup token until a password is
// set, then the password (or the token) as proof.
type fakeAuth struct {
	mu       sync.Mutex
	password string
	token    string
	sets     int
}

func (a *fakeAuth) PasswordSet() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.password != ""
}

func (a *fakeAuth) Check(pw string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.password != "" && pw == a.password
}

func (a *fakeAuth) SetPassword(proof, pw string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	want := a.password
	if want == "" {
		want = a.token
	}
	if proof != want {
		return errors.New("wrong setup token or password")
	}
	if len(pw) < 8 {
		return errors.New("password too short")
	}
	a.password = pw
	a.sets++
	return nil
}

// fakeLimiter refuses a source after max failures, until a success.
type fakeLimiter struct {
	mu       sync.Mutex
	max      int
	failures map[netip.Addr]int
	allowed  int
	refused  int
}

func (l *fakeLimiter) Allow(a netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failures[a] >= l.max {
		l.refused++
		return false
	}
	l.allowed++
	return true
}

func (l *fakeLimiter) Failed(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures[a]++
}

func (l *fakeLimiter) Succeeded(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, a)
}

func (l *fakeLimiter) failed(a netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures[a]
}

// fakeClock is an injected Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
