package cfg

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

type memStore struct {
	mu    sync.Mutex
	blob  []byte
	saves int
}

func (m *memStore) Load() ([]byte, error) { m.mu.Lock(); defer m.mu.Unlock(); return m.blob, nil }
func (m *memStore) Save(b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.blob = append([]byte(nil), b...)
	m.saves++
	return nil
}

func open(t *testing.T, st Store, bus *event.Bus) *Config {
	t.Helper()
	c, err := Open(st, bus)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustGet(t *testing.T, c *Config, k string) string {
	t.Helper()
	v, err := c.Get(k)
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	return v
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one with %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q lacks %q", err, p)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := open(t, nil, nil)
	for k, want := range map[string]string{
		"network.lan.ipaddr":                 "192.168.1.1",
		"network.lan.netmask":                "255.255.255.0",
		"network.wan.proto":                  "dhcp",
		"dhcp.lan.start":                     "100",
		"dhcp.lan.limit":                     "150",
		"dhcp.lan.leasetime":                 "12h",
		"dhcp.wan.ignore":                    "1",
		"dhcp.@dnsmasq[0].domain":            "lan",
		"system.hostname":                    "gowrt",
		"system.@system[0].log_size":         "64",
		"system.ntp.server":                  "0.openwrt.pool.ntp.org 1.openwrt.pool.ntp.org 2.openwrt.pool.ntp.org 3.openwrt.pool.ntp.org",
		"wireless.radio0.channel":            "1",
		"wireless.radio0.disabled":           "1",
		"wireless.default_radio0.ssid":       "gowrt",
		"wireless.default_radio0.encryption": "none",
		"dropbear.Port":                      "22",
		"firewall.wan.input":                 "REJECT",
		"firewall.lan.forward":               "ACCEPT",
		"network.lan":                        "interface",
	} {
		if got := mustGet(t, c, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	s := c.Snapshot()
	if s.LAN.Addr != netip.MustParsePrefix("192.168.1.1/24") || s.WAN.Proto != "dhcp" || s.DHCP.Start != 100 ||
		s.DHCP.Limit != 150 || s.DHCP.LeaseTime != 12*time.Hour || s.DHCP.Domain != "lan" || s.DHCP.Ignore ||
		s.System.Hostname != "gowrt" || s.System.LogSize != 64<<10 || s.System.Timezone != "UTC" ||
		!s.NTP.Enabled || len(s.NTP.Servers) != 4 || s.SSH != (SSH{22, true, "lan"}) ||
		len(s.Wireless.Radios) != 1 || !s.Wireless.Radios[0].Disabled || s.Wireless.Radios[0].Channel != 1 ||
		s.Wireless.Ifaces[0].SSID != "gowrt" || s.WAN.Hostname != "gowrt" {
		t.Errorf("snapshot %+v", s)
	}
	if err := validate(defaults()); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	c.Export(&b)
	t.Logf("default blob: %d bytes", b.Len())
}

func TestSetCommitRevert(t *testing.T) {
	st := &memStore{}
	bus := event.NewBus()
	sub := bus.Config.Subscribe(4)
	c := open(t, st, bus)
	if ch, err := c.Commit(); err != nil || ch != nil || st.saves != 0 {
		t.Fatalf("empty commit: %v %v saves %d", ch, err, st.saves)
	}
	if err := c.Set("dhcp.lan.start", "120"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("system.hostname", "edge-1"); err != nil {
		t.Fatal(err)
	}
	if got := c.Changes(); len(got) != 2 || got[0] != "dhcp.lan.start='120'" {
		t.Fatalf("changes %q", got)
	}
	if c.Snapshot().DHCP.Start != 100 {
		t.Fatal("snapshot changed before commit")
	}
	old := c.Snapshot()
	ch, err := c.Commit()
	if err != nil || strings.Join(ch, ",") != "dhcp,system" || st.saves != 1 {
		t.Fatalf("commit %v %v saves %d", ch, err, st.saves)
	}
	ev := <-sub.C()
	if ev.Seq != 1 || strings.Join(ev.Packages, ",") != "dhcp,system" {
		t.Fatalf("event %+v", ev)
	}
	if s := c.Snapshot(); s == old || s.DHCP.Start != 120 || s.DHCP.Limit != 135 || s.System.Hostname != "edge-1" || old.DHCP.Start != 100 {
		t.Fatal("snapshot not replaced")
	}
	// Set back to the committed value: nothing changed, nothing written.
	c.Set("dhcp.lan.start", "121")
	c.Set("dhcp.lan.start", "120")
	if ch, err := c.Commit(); err != nil || ch != nil || st.saves != 1 || len(c.Changes()) != 0 {
		t.Fatalf("no-op commit %v %v %d", ch, err, st.saves)
	}
	c.Set("dhcp.lan.limit", "10")
	c.Revert()
	if mustGet(t, c, "dhcp.lan.limit") != "150" || len(c.Changes()) != 0 {
		t.Fatal("revert")
	}
	// Reopen from the store.
	c2 := open(t, st, nil)
	if mustGet(t, c2, "dhcp.lan.start") != "120" || c2.Snapshot().System.Hostname != "edge-1" {
		t.Fatal("reopen lost the commit")
	}
}

func TestErrorsNameKeys(t *testing.T) {
	c := open(t, nil, nil)
	for _, tc := range []struct {
		key, val string
		want     []string
	}{
		{"dhcp.lan.start", "300", []string{`dhcp.lan.start: "300": out of range 1..254`}},
		{"dhcp.lan.leasetime", "1m", []string{"dhcp.lan.leasetime", "minimum"}},
		{"dhcp.lan.leasetime", "12x", []string{"dhcp.lan.leasetime", "not a lease time"}},
		{"network.lan.ipaddr", "192.168.1.300", []string{"network.lan.ipaddr", "IPv4"}},
		{"network.lan.netmask", "255.0.255.0", []string{"network.lan.netmask", "contiguous"}},
		{"network.lan.bogus", "1", []string{"network.lan.bogus", "unknown option"}},
		{"nosuch.a.b", "1", []string{"nosuch.a.b", "unknown package"}},
		{"network.nosuch.ipaddr", "1.2.3.4", []string{"network.nosuch.ipaddr", "not found"}},
		{"system.hostname", "-bad", []string{"system.hostname", "starts or ends"}},
		{"system.hostname", "a_b", []string{"system.hostname", "letters, digits"}},
		{"system.hostname", strings.Repeat("a", 64), []string{"system.hostname", "1..63"}},
		{"wireless.radio0.disabled", "maybe", []string{"wireless.radio0.disabled", "boolean"}},
		{"wireless.radio0.channel", "0", []string{"wireless.radio0.channel", "auto"}},
		{"wireless.radio0.htmode", "HT80", []string{"wireless.radio0.htmode", "one of"}},
		{"dropbear.Port", "65536", []string{"dropbear.Port", "out of range 1..65535"}},
		{"system.password", "secret", []string{"system.password", "bcrypt"}},
		{"system.crontab", "*/5 * * * *", []string{"system.crontab", "five schedule fields and a command"}},
		{"system.crontab", "61 * * * * logread", []string{"system.crontab", `schedule "61 * * * *"`}},
		{"system.authorized_keys", "ssh-ed25519 notbase64", []string{"system.authorized_keys", "SSH public key"}},
		{"dhcp.lan.start", "1\n2", []string{"dhcp.lan.start", "control"}},
		{"firewall.wan.dest_prot", "22", []string{"firewall.wan.dest_prot", "unknown option"}},
		{"network.guest", "nosuchtype", []string{"network.guest", "unknown section type"}},
		{"a", "b", []string{"a:", "key must be"}},
	} {
		wantErr(t, c.Set(tc.key, tc.val), tc.want...)
	}
	for _, v := range []string{"on", "off", "yes", "no", "true", "false", "enabled", "disabled", "0", "1"} {
		if err := c.Set("wireless.radio0.disabled", v); err != nil {
			t.Errorf("bool %q: %v", v, err)
		}
	}
	for _, v := range []string{"3600", "30m", "12h", "2d", "1w", "infinite"} {
		if err := c.Set("dhcp.lan.leasetime", v); err != nil {
			t.Errorf("lease %q: %v", v, err)
		}
	}
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGUWIW2NjbTLz7f/hwpq9NbKsDqScdZEHf/IRldUUHEj admin@lan"
	if err := c.Set("system.authorized_keys", key); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("system.password", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get("system.nosuch"); err == nil || !strings.Contains(err.Error(), "system.nosuch") {
		t.Fatalf("get unknown: %v", err)
	}
	if _, err := c.Get("network.lan.gateway"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get unset: %v", err)
	}
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := c.Snapshot().System.AuthorizedKeys; len(got) != 1 || got[0] != key {
		t.Fatalf("keys %q", got)
	}
}

func TestAnonymousSectionsAndLists(t *testing.T) {
	c := open(t, nil, nil)
	id, err := c.AddSection("dhcp", "host")
	if err != nil || id != "@host[0]" {
		t.Fatalf("%q %v", id, err)
	}
	id2, _ := c.AddSection("dhcp", "host")
	if id2 != "@host[1]" {
		t.Fatal(id2)
	}
	for k, v := range map[string]string{
		"dhcp.@host[0].name": "nas", "dhcp.@host[0].mac": "00:11:22:33:44:55", "dhcp.@host[0].ip": "192.168.1.10",
		"dhcp.@host[-1].name": "tv", "dhcp.@host[-1].mac": "00:11:22:33:44:66 00:11:22:33:44:67",
	} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := c.GetList("dhcp.@host[1].mac"); len(l) != 2 {
		t.Fatalf("mac list %q", l)
	}
	if err := c.AddList("network.wan.dns", "1.1.1.1"); err != nil {
		t.Fatal(err)
	}
	c.AddList("network.wan.dns", "9.9.9.9")
	wantErr(t, c.AddList("network.wan.dns", "x"), "network.wan.dns")
	wantErr(t, c.AddList("network.wan.proto", "dhcp"), "network.wan.proto", "not a list")
	if err := c.DelList("network.wan.dns", "1.1.1.1"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, c.DelList("network.wan.dns", "8.8.8.8"), "network.wan.dns")
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()
	if len(s.DHCP.Hosts) != 2 || s.DHCP.Hosts[0].Name != "nas" || s.DHCP.Hosts[0].IP != netip.MustParseAddr("192.168.1.10") ||
		s.DHCP.Hosts[1].MAC.String() != "00:11:22:33:44:66" || len(s.WAN.DNS) != 1 || s.WAN.DNS[0] != netip.MustParseAddr("9.9.9.9") {
		t.Fatalf("%+v %+v", s.DHCP.Hosts, s.WAN.DNS)
	}
	if err := c.DeleteSection("dhcp", "@host[0]"); err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, c, "dhcp.@host[0].name"); v != "tv" {
		t.Fatal(v)
	}
	wantErr(t, c.DeleteSection("dhcp", "@host[5]"), "dhcp.@host[5]")
	if secs := c.Sections("dhcp", "host"); len(secs) != 1 || secs[0].ID != "@host[0]" || secs[0].Options["name"][0] != "tv" {
		t.Fatalf("%+v", secs)
	}
	// A named section by set, then a firewall redirect.
	if err := c.Set("network.guest", "interface"); err != nil {
		t.Fatal(err)
	}
	c.Set("network.guest.proto", "static")
	c.Set("network.guest.ipaddr", "10.0.0.1")
	c.Set("network.guest.netmask", "255.255.255.0")
	rid, _ := c.AddSection("firewall", "redirect")
	for k, v := range map[string]string{"name": "web", "src": "wan", "dest": "lan", "proto": "tcp", "src_dport": "8080", "dest_ip": "192.168.1.10", "dest_port": "80", "target": "DNAT"} {
		if err := c.Set("firewall."+rid+"."+k, v); err != nil {
			t.Fatal(err)
		}
	}
	if ch, err := c.Commit(); err != nil || strings.Join(ch, ",") != "dhcp,firewall,network" {
		t.Fatalf("%v %v", ch, err)
	}
	if !strings.Contains(c.Snapshot().Firewall, "'DNAT'") {
		t.Fatal("firewall text")
	}
}

func TestCrossField(t *testing.T) {
	for _, tc := range []struct {
		sets [][2]string
		want []string
	}{
		{[][2]string{{"network.lan.netmask", "255.255.255.128"}, {"dhcp.lan.start", "130"}}, []string{"dhcp.lan.start", "130 puts the pool outside 192.168.1.0/25"}},
		{[][2]string{{"dhcp.lan.start", "1"}, {"dhcp.lan.limit", "10"}}, []string{"dhcp.lan", "router's address"}},
		{[][2]string{{"network.wan.proto", "static"}}, []string{"network.wan", "needs ipaddr and netmask"}},
		{[][2]string{{"network.wan.proto", "static"}, {"network.wan.ipaddr", "192.168.1.2"}, {"network.wan.netmask", "255.255.0.0"}}, []string{"network.wan", "overlaps"}},
		{[][2]string{{"network.lan.ipaddr", "192.168.1.0"}}, []string{"network.lan.ipaddr", "network or broadcast"}},
		{[][2]string{{"network.lan.proto", "dhcp"}}, []string{"network.lan.proto", "static"}},
		{[][2]string{{"wireless.default_radio0.encryption", "psk2"}}, []string{"wireless.default_radio0.key", "needs a key"}},
		{[][2]string{{"wireless.default_radio0.encryption", "psk2"}, {"wireless.default_radio0.key", "short"}}, []string{"wireless.default_radio0.key", "8..63"}},
		{[][2]string{{"wireless.default_radio0.device", "radio9"}}, []string{"wireless.default_radio0.device"}},
		{[][2]string{{"wireless.default_radio0.encryption", "psk2"}, {"wireless.default_radio0.key", strings.Repeat("x", 64)}}, []string{"wireless.default_radio0.key", "hex digits"}},
		{[][2]string{{"wireless.default_radio0.ssid", strings.Repeat("s", 33)}}, []string{"wireless.default_radio0.ssid", "33 bytes, at most 32"}},
		{[][2]string{{"wireless.radio0.channel", "15"}}, []string{"wireless.radio0.channel", "not a 2.4 GHz channel"}},
		{[][2]string{{"wireless.radio0.band", "5g"}, {"wireless.radio0.channel", "6"}}, []string{"wireless.radio0.channel", "not a 5 GHz channel"}},
		{[][2]string{{"wireless.radio0.band", "6g"}}, []string{"wireless.radio0", "2.4 and 5 GHz"}},
		{[][2]string{{"wireless.default_radio0.encryption", "sae"}, {"wireless.default_radio0.key", "long enough"}}, []string{"wireless.default_radio0.encryption", "none or psk2, not sae"}},
		{[][2]string{{"dropbear.Interface", "nosuch"}}, []string{"dropbear.@dropbear[0].Interface"}},
		{[][2]string{{"firewall.wan.input", "MAYBE"}}, []string{"firewall:", "zone", "input"}},
		{[][2]string{{"dhcp.wan.ignore", "0"}}, []string{"dhcp.wan", "not static"}},
	} {
		c := open(t, nil, nil)
		for _, s := range tc.sets {
			if err := c.Set(s[0], s[1]); err != nil {
				t.Fatal(err)
			}
		}
		ch, err := c.Commit()
		wantErr(t, err, tc.want...)
		if ch != nil || len(c.Changes()) == 0 {
			t.Fatal("failed commit dropped staged changes")
		}
	}
	c := open(t, nil, nil)
	c.DeleteSection("network", "lan")
	_, err := c.Commit()
	wantErr(t, err, "network.lan", "missing")
	// A valid wpa key commits.
	c = open(t, nil, nil)
	c.Set("wireless.default_radio0.encryption", "psk2")
	c.Set("wireless.default_radio0.key", "correct horse")
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	// The AP's settings decode, with gowrt's crypto placement.
	c.Set("wireless.radio0.band", "5g")
	c.Set("wireless.radio0.channel", "149")
	c.Set("wireless.radio0.disabled", "0")
	c.Set("wireless.default_radio0.crypto", "hardware")
	c.Set("wireless.default_radio0.hidden", "1")
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	w := c.Snapshot().Wireless
	if len(w.Radios) != 1 || w.Radios[0] != (Radio{Name: "radio0", Band: "5g", Channel: 149, HTMode: "HT20"}) {
		t.Errorf("radios %+v", w.Radios)
	}
	if len(w.Ifaces) != 1 || w.Ifaces[0].Crypto != "hardware" || !w.Ifaces[0].Hidden || w.Ifaces[0].Key != "correct horse" || w.Ifaces[0].Encryption != "psk2" {
		t.Errorf("ifaces %+v", w.Ifaces)
	}
	if err := c.Set("wireless.default_radio0.crypto", "firmware"); err == nil {
		t.Error("crypto 'firmware' accepted")
	}
	// A disabled interface may keep an encryption the AP does not run.
	c.Set("wireless.default_radio0.encryption", "sae")
	c.Set("wireless.default_radio0.disabled", "1")
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestExportImport(t *testing.T) {
	c := open(t, nil, nil)
	c.Set("dhcp.lan.start", "50")
	c.Commit()
	var b bytes.Buffer
	if err := c.Export(&b); err != nil {
		t.Fatal(err)
	}
	d := open(t, nil, nil)
	if err := d.Import(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatal(err)
	}
	if ch, err := d.Commit(); err != nil || strings.Join(ch, ",") != "dhcp" {
		t.Fatalf("%v %v", ch, err)
	}
	var b2 bytes.Buffer
	d.Export(&b2)
	if b.String() != b2.String() {
		t.Fatalf("round trip differs:\n%s\n---\n%s", b.String(), b2.String())
	}
	var one bytes.Buffer
	d.Export(&one, "system")
	if !strings.HasPrefix(one.String(), "package 'system'") || strings.Contains(one.String(), "dhcp") {
		t.Fatal(one.String())
	}
	wantErr(t, d.Export(&one, "nope"), "nope")
	wantErr(t, d.Import(strings.NewReader("package system\nconfig system\n\toption hostnme 'x'\n")), "system.@system[0].hostnme", "unknown option")
	wantErr(t, d.Import(strings.NewReader("package system\nconfig bogus\n")), "system.@bogus[0]", "unknown section type")
	wantErr(t, d.Import(strings.NewReader("package nosuch\n")), "nosuch", "unknown package")
	wantErr(t, d.Import(strings.NewReader("config system\n")), "before the first `package`")
	// option dns 'a b' is read as a list.
	if err := d.Import(strings.NewReader("package network\nconfig interface lan\n option proto static\n option ipaddr 10.1.1.1\n option netmask 255.255.255.0\nconfig interface wan\n option proto dhcp\n option dns '1.1.1.1 8.8.8.8'\n")); err != nil {
		t.Fatal(err)
	}
	if l, _ := d.GetList("network.wan.dns"); len(l) != 2 {
		t.Fatal(l)
	}
	if _, err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if d.Snapshot().LAN.Addr != netip.MustParsePrefix("10.1.1.1/24") {
		t.Fatal(d.Snapshot().LAN)
	}
}

func TestFactoryResetAndCorruptStore(t *testing.T) {
	st := &memStore{blob: []byte("package system\nconfig system\n\toption hostname 'bad host'\n")}
	c, err := Open(st, nil)
	wantErr(t, err, "using defaults", "system.@system[0].hostname")
	if c == nil || mustGet(t, c, "system.hostname") != "gowrt" || st.saves != 0 {
		t.Fatal("not defaults, or store overwritten")
	}
	if ch, _ := c.Commit(); ch != nil || st.saves != 0 {
		t.Fatal("empty commit wrote")
	}
	for _, bad := range []string{"garbage 'unterminated", "package dhcp\nconfig dhcp lan\n option start 255\n option interface lan\n"} {
		if _, err := Open(&memStore{blob: []byte(bad)}, nil); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	// A blob lacking packages gets their defaults.
	c = open(t, &memStore{blob: []byte("package system\nconfig system\n\toption hostname 'old'\n")}, nil)
	if mustGet(t, c, "system.hostname") != "old" || mustGet(t, c, "dhcp.lan.start") != "100" {
		t.Fatal("partial blob")
	}
	c.Set("dhcp.lan.start", "10")
	if err := c.FactoryReset(); err != nil {
		t.Fatal(err)
	}
	if mustGet(t, c, "system.hostname") != "gowrt" || mustGet(t, c, "dhcp.lan.start") != "100" || len(c.Changes()) != 0 {
		t.Fatal("reset")
	}
	st = &memStore{blob: []byte("junk")}
	c, _ = Open(st, nil)
	if err := c.FactoryReset(); err != nil || st.saves != 1 {
		t.Fatal("reset did not replace the bad blob", err)
	}
	open(t, st, nil)
}

func TestCommand(t *testing.T) {
	c := open(t, nil, nil)
	run := func(in string, args ...string) (string, error) {
		var b bytes.Buffer
		err := c.Command(strings.NewReader(in), &b, args)
		return b.String(), err
	}
	if _, err := run("", "set", "dhcp.lan.start=120"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("", "set", "system.hostname", "edge"); err != nil {
		t.Fatal(err)
	}
	if out, _ := run("", "get", "dhcp.lan.start"); out != "120\n" {
		t.Fatal(out)
	}
	if out, _ := run("", "changes"); !strings.Contains(out, "dhcp.lan.start='120'") {
		t.Fatal(out)
	}
	if out, _ := run("", "show", "dhcp"); !strings.Contains(out, "dhcp.lan.start='120'\n") || !strings.Contains(out, "dhcp.@dnsmasq[0]=dnsmasq\n") {
		t.Fatal(out)
	}
	if out, err := run("", "commit"); err != nil || out != "committed: dhcp system\n" {
		t.Fatal(out, err)
	}
	if out, _ := run("", "commit"); out != "no changes\n" {
		t.Fatal(out)
	}
	_, err := run("", "set", "dhcp.lan.start=300")
	wantErr(t, err, `dhcp.lan.start: "300": out of range 1..254`)
	_, err = run("", "set", "dhcp.lan.start")
	wantErr(t, err, "missing '=VALUE'")
	_, err = run("", "frob")
	wantErr(t, err, "unknown command", "usage")
	if out, _ := run("", "add", "dhcp", "host"); out != "@host[0]\n" {
		t.Fatal(out)
	}
	run("", "revert")
	exp, _ := run("", "export", "dhcp")
	if _, err := run(strings.Replace(exp, "'120'", "'130'", 1), "import"); err != nil {
		t.Fatal(err)
	}
	run("", "commit")
	if mustGet(t, c, "dhcp.lan.start") != "130" {
		t.Fatal("import via command")
	}
	if out, err := run("", "reset"); err != nil || !strings.Contains(out, "factory") || mustGet(t, c, "dhcp.lan.start") != "100" {
		t.Fatal(out, err)
	}
}

func TestConcurrent(t *testing.T) {
	c := open(t, &memStore{}, event.NewBus())
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				c.Set("dhcp.lan.start", []string{"100", "101", "102", "103"}[(i+j)%4])
				c.Get("dhcp.lan.start")
				c.Sections("dhcp", "")
				_ = c.Snapshot().DHCP.Start
				c.Commit()
				var b bytes.Buffer
				c.Export(&b)
			}
		}(i)
	}
	wg.Wait()
}

// TestCrontab: cron lines are a whole-line list of system and reach the
// snapshot as written.
func TestCrontab(t *testing.T) {
	c := open(t, nil, nil)
	for _, l := range []string{"*/5 * * * * logread -l 1", "0 3 * * 1 cfg export dhcp"} {
		if err := c.AddList("system.crontab", l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	got := c.Snapshot().System.Crontab
	if len(got) != 2 || got[0] != "*/5 * * * * logread -l 1" || got[1] != "0 3 * * 1 cfg export dhcp" {
		t.Fatalf("crontab %q", got)
	}
}
