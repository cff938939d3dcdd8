package wantest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Management is a firmware under test (the firmware package: router,
// supervisor, SSH, web UI), as CheckManagement sees it.
type Management struct {
	// Console returns what the firmware printed on its console so far
	// (the first-boot setup token is there, and only there).
	Console func() string
	// Crashy names a service that panics every time it runs: the
	// supervisor must restart it with backoff and then park it.
	Crashy string
	// Artifacts is where screenshots go ($GOWRT_ARTIFACTS or a test
	// directory).
	Artifacts string
	// KernelLog, if set, is console text that must reach logread as a
	// kernel-facility line (bare metal: the kernel's console log).
	KernelLog string
}

// The router's management addresses and what a LAN scan may find open:
// SSH, HTTP (web UI), DNS over UDP and TCP, nothing else. The DHCP server
// is open too, but answers a client without an address by broadcast to
// port 68 (RFC 2131 4.1), which the scanner's socket does not receive:
// the dhclient leases show it.
const routerLAN = "192.168.1.1"

var wantLANServices = []string{"tcp 22", "tcp 53", "tcp 80", "udp 53"}

var tokenRE = regexp.MustCompile(`setup token: ([A-Z2-7-]+)`)

// CheckManagement runs the management issue's "done when" against a
// freshly booted firmware cabled to n (WAN) and to lan (two LAN links in
// the test's namespace):
//
//   - a LAN user opens the web UI in Chromium, sets the password with the
//     console's setup token, adds an SSH key and changes the DHCP start;
//   - SSH with that key runs logread and `cfg set dhcp.lan.start=120;
//     cfg set dhcp.lan.limit=5; cfg commit`, and a new dhclient lease
//     comes from .120-.124, no reboot;
//   - the crashy service is parked, visible in `services` and logread,
//     while the router keeps forwarding (NAT to the Internet host);
//   - security: a LAN scan finds only SSH, HTTP, DNS and DHCP, a WAN scan
//     nothing; no write endpoint changes state without a session or with
//     a forged CSRF token; /debug/pprof is not served.
func (n *Net) CheckManagement(t testing.TB, lan [2]string, m Management) {
	t.Helper()
	c1 := NewClient(t, lan[0])
	l1 := c1.DHCP(t, 60*time.Second)
	t.Logf("LAN client 1: %s", l1)

	var token string
	deadline := time.Now().Add(30 * time.Second)
	for token == "" {
		if sm := tokenRE.FindStringSubmatch(m.Console()); sm != nil {
			token = sm[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no setup token on the console:\n%s", m.Console())
		} else {
			time.Sleep(200 * time.Millisecond)
		}
	}

	// An SSH key pair for the LAN user, made by OpenSSH's ssh-keygen.
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := c1.NS.Exec(30*time.Second, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lan-user", "-f", key); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	ssh := func(cmd string) string {
		t.Helper()
		out, err := c1.NS.Exec(60*time.Second, "ssh", "-i", key, "-o", "StrictHostKeyChecking=no",
			"-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20",
			"-o", "LogLevel=ERROR", "root@"+routerLAN, cmd)
		if err != nil {
			t.Fatalf("ssh %q: %v\n%s", cmd, err, out)
		}
		return out
	}

	// Before any key is set, SSH refuses.
	if out, err := c1.NS.Exec(60*time.Second, "ssh", "-i", key, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20",
		"root@"+routerLAN, "uptime"); err == nil {
		t.Fatalf("SSH let an unknown key in:\n%s", out)
	}

	Browse(t, c1.NS, BrowserTask{URL: "http://" + routerLAN, Token: token, Password: "lan-admin-pw",
		SSHKey: strings.TrimSpace(string(pub)), DHCPStart: 110, Dir: m.Artifacts})

	out := ssh("logread; cfg get dhcp.lan.start")
	if !strings.Contains(out, "web: SSH key added") || !strings.HasSuffix(strings.TrimSpace(out), "110") {
		t.Fatalf("logread and cfg get over SSH:\n%s", out)
	}
	// A pool of five from .120: outside both the default pool's start
	// and the browser's, so the lease shows which one the server uses.
	out = ssh("cfg set dhcp.lan.start=120; cfg set dhcp.lan.limit=5; cfg commit")
	if !strings.Contains(out, "dhcp") {
		t.Fatalf("cfg commit over SSH printed:\n%s", out)
	}
	c2 := NewClient(t, lan[1])
	l2 := c2.DHCP(t, 60*time.Second)
	if a := Addr(l2); !a.IsValid() || a.As4()[3] < 120 || a.As4()[3] > 124 {
		t.Fatalf("the lease after dhcp.lan.start=120, limit=5 is %v, want one of 192.168.1.120-124 (%s)", a, l2)
	}
	t.Logf("LAN client 2 after the commit: %s", l2)

	// The crashy service: restarted with backoff, then parked.
	var services string
	deadline = time.Now().Add(90 * time.Second)
	for {
		services = ssh("services")
		if line := lineWith(services, m.Crashy); strings.Contains(line, "parked") {
			t.Logf("services:\n%s", services)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never parked:\n%s", m.Crashy, services)
		}
		time.Sleep(2 * time.Second)
	}
	all := ssh("logread")
	if strings.Contains(all, token) || strings.Contains(all, strings.ReplaceAll(token, "-", "")) {
		t.Errorf("the setup token is in the log ring, which the web UI and remote syslog show:\n%s", all)
	}
	if m.KernelLog != "" {
		if l := lineWith(all, m.KernelLog); !strings.Contains(l, "kern.") {
			t.Errorf("console text %q is not in logread as a kernel line (%q)", m.KernelLog, l)
		}
		if !strings.Contains(all, "setup token, withheld") {
			t.Errorf("the console's setup-token line did not reach logread withheld:\n%s", all)
		}
	}
	logs := ssh("logread -e " + m.Crashy)
	if !strings.Contains(logs, m.Crashy) || !strings.Contains(logs, "panic") {
		t.Fatalf("logread lacks %s's panics:\n%s", m.Crashy, logs)
	}
	// ... while the router forwards.
	c1.NS.Must(t, "ping", "-c", "2", "-W", "5", HostAddr.Addr().String())
	if out := c1.NS.Must(t, "curl", "-s", "--max-time", "20", fmt.Sprintf("http://%s:%d/", HostAddr.Addr(), HTTPPort)); !strings.HasPrefix(out, "peer ") {
		t.Fatalf("HTTP through NAT: %q", out)
	}

	// Security.
	got := Scan(t, c1.NS, routerLAN)
	slices.Sort(got)
	if !slices.Equal(got, wantLANServices) {
		t.Errorf("LAN scan found %q, want %q", got, wantLANServices)
	}
	wan := routerWAN(t, n)
	if got := Scan(t, n.ISP, wan.String()); len(got) != 0 {
		t.Errorf("WAN scan of %v found %q, want nothing", wan, got)
	}
	n.checkNoStateChange(t, c1, ssh)
}

// lineWith returns the first line of s containing word.
func lineWith(s, word string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			return l
		}
	}
	return ""
}

// routerWAN is the router's WAN address from the ISP's lease file.
func routerWAN(t testing.TB, n *Net) netip.Addr {
	for _, f := range strings.Fields(n.Leases()) {
		if a, err := netip.ParseAddr(f); err == nil && ISPAddr.Contains(a) {
			return a
		}
	}
	t.Fatalf("no WAN lease at the ISP:\n%s", n.Leases())
	return netip.Addr{}
}

// writeEndpoints are the web UI's state-changing requests, with forms
// that would change something if accepted.
var writeEndpoints = []struct{ path, form string }{
	{"/settings/dhcp", "start=150&limit=50&leasetime=12h"},
	{"/settings/lan", "ipaddr=192.168.7.1&netmask=255.255.255.0"},
	{"/settings/wifi", "ssid=pwned&encryption=psk2&key=password123"},
	{"/settings/forwards/add", "name=x&proto=tcp&src_dport=2222&dest_ip=192.168.1.50&dest_port=22"},
	{"/settings/forwards/delete", "id=@redirect[0]"},
	{"/settings/ssh/add", "key=ssh-ed25519+AAAAC3NzaC1lZDI1NTE5AAAAIGowrtGowrtGowrtGowrtGowrtGowrtGowrtGowrtGowrt+x"},
	{"/settings/ssh/delete", "key=lan-user"},
	{"/reboot", "confirm=1"},
	{"/logout", ""},
	{"/login", "password=wrong-password"},
}

// checkNoStateChange tries every write endpoint without a session and
// with a real session but a forged CSRF token, and checks that the
// configuration did not change; /debug/pprof must be absent.
func (n *Net) checkNoStateChange(t testing.TB, c *Client, ssh func(string) string) {
	t.Helper()
	before := ssh("cfg export")
	jar := filepath.Join(t.TempDir(), "cookies")
	curl := func(args ...string) string {
		t.Helper()
		out, err := c.NS.Exec(30*time.Second, append([]string{"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
			"--max-time", "20", "-b", jar, "-c", jar}, args...)...)
		if err != nil {
			t.Fatalf("curl %q: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(out)
	}
	base := "http://" + routerLAN
	for _, e := range writeEndpoints {
		if e.path == "/login" {
			continue
		}
		if code := curl("-X", "POST", "--data", e.form, base+e.path); code != "303" && code != "401" && code != "403" {
			t.Errorf("POST %s without a session: HTTP %s", e.path, code)
		}
	}
	// A real session (the password the browser chose), forged tokens.
	if code := curl("--data", "password=lan-admin-pw&next=/", base+"/login"); code != "303" {
		t.Fatalf("login with the password: HTTP %s", code)
	}
	for _, e := range writeEndpoints {
		if e.path == "/login" {
			continue
		}
		form := e.form + "&csrf=0123456789abcdef0123456789abcdef"
		if code := curl("-X", "POST", "--data", form, base+e.path); code != "403" {
			t.Errorf("POST %s with a forged CSRF token: HTTP %s, want 403", e.path, code)
		}
	}
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/vars"} {
		if code := curl(base + p); code != "404" {
			t.Errorf("GET %s: HTTP %s, want 404", p, code)
		}
	}
	if after := ssh("cfg export"); after != before {
		t.Errorf("the configuration changed under refused requests:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
