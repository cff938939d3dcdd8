//go:build linux && !mips && !mipsle

package firmware_test

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/config/cfg"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/wantest"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/sys/supervisor"
	"github.com/gowrt/gowrt/sys/syslog"
)

func TestMain(m *testing.M) { wantest.Main(m) }

// tapBoard is a board whose ports are TAP devices and whose storage is
// RAM: the firmware as a host process, cabled to test namespaces.
type tapBoard struct {
	ports []board.Port
	mem   *memStorage
}

func (b *tapBoard) Name() string                           { return "tap" }
func (b *tapBoard) Ports() ([]board.Port, error)           { return b.ports, nil }
func (b *tapBoard) Store(name string) (board.Store, error) { return b.mem.item(name), nil }

type memStorage struct {
	mu    sync.Mutex
	items map[string][]byte
}

func (m *memStorage) item(name string) board.Store { return memItem{m, name} }

type memItem struct {
	m    *memStorage
	name string
}

func (i memItem) Load() ([]byte, error) {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	return bytes.Clone(i.m.items[i.name]), nil
}

func (i memItem) Save(b []byte) error {
	i.m.mu.Lock()
	defer i.m.mu.Unlock()
	i.m.items[i.name] = bytes.Clone(b)
	return nil
}

func openTAP(t *testing.T, i int) (gnet.NIC, string) {
	t.Helper()
	d, err := tap.Open("")
	if err != nil {
		t.Fatal(err)
	}
	return tap.NewNIC(d, gnet.MAC{0x02, 0x67, 0x77, 0, 0, byte(i)}), d.Name()
}

// crashy panics every time it runs: the supervisor must back off and
// park it while the rest runs on.
func crashy(context.Context) error { panic("crashy: this service always panics") }

// artifacts is where screenshots go.
func artifacts(t *testing.T) string {
	if d := os.Getenv("GOWRT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestFirmwareManagement: the firmware, freshly booted with nothing
// stored, on TAP ports: the web UI's first-boot login in Chromium, SSH
// with the key set there, a DHCP change applied without a reboot, a
// panicking service parked while the router forwards, and the security
// scan (wantest.CheckManagement).
func TestFirmwareManagement(t *testing.T) {
	lan1, lan1Dev := openTAP(t, 1)
	lan2, lan2Dev := openTAP(t, 2)
	wan, wanDev := openTAP(t, 3)
	far := wantest.New(t, wanDev, 2*time.Minute)
	b := &tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{
		{Name: "lan1", Role: board.LAN, NIC: lan1}, {Name: "lan2", Role: board.LAN, NIC: lan2},
		{Name: "wan", Role: board.WAN, NIC: wan}}}
	console := &wantest.SyncBuffer{}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: console,
		Services: []supervisor.Service{{Name: "crashy", Restart: supervisor.Always, Run: crashy,
			MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, CrashLoop: 5, CrashWindow: time.Minute}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	far.CheckManagement(t, [2]string{lan1Dev, lan2Dev}, wantest.Management{
		Console: console.String, Crashy: "crashy", Artifacts: artifacts(t)})

	// What was committed is in the board's storage.
	if s, _ := b.Store(firmware.StoreConfig); s != nil {
		if blob, _ := s.Load(); !bytes.Contains(blob, []byte("'120'")) {
			t.Errorf("stored configuration lacks the new DHCP start:\n%s", blob)
		}
	}
}

// seedConfig commits settings into the board's storage, as a previous
// boot would have.
func seedConfig(t *testing.T, b *tapBoard, set map[string]string, lists map[string][]string) {
	t.Helper()
	st, _ := b.Store(firmware.StoreConfig)
	c, err := cfg.Open(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, vs := range lists {
		for _, v := range vs {
			if err := c.AddList(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestFirmwareStoredConfig boots from a configuration a previous boot
// committed: the host name reaches the ISP, SNTP asks the configured
// server, a crontab line runs once the clock is set (and not before), and
// remote syslog starts when system.log_ip is committed, without a reboot.
func TestFirmwareStoredConfig(t *testing.T) {
	lan1, lan1Dev := openTAP(t, 1)
	wan, wanDev := openTAP(t, 3)
	far := wantest.New(t, wanDev, 2*time.Minute)
	b := &tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{
		{Name: "lan1", Role: board.LAN, NIC: lan1}, {Name: "wan", Role: board.WAN, NIC: wan}}}
	seedConfig(t, b, map[string]string{"system.hostname": "testgw", "system.ntp.server": wantest.NTPName},
		map[string][]string{"system.crontab": {"* * * * * echo cron-ran at minute"}})
	console := &wantest.SyncBuffer{}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: console})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	if jobs := f.Cron.Jobs(); len(jobs) != 1 {
		t.Fatalf("cron jobs %+v, want the crontab line", jobs)
	}

	c := wantest.NewClient(t, lan1Dev)
	lease := c.DHCP(t, 60*time.Second)
	sink := &wantest.SyncBuffer{}
	wantest.UDPSink(t, c.NS, 514, sink)
	if err := f.Config.Set("system.log_ip", wantest.Addr(lease).String()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Config.Commit(); err != nil {
		t.Fatal(err)
	}
	log := f.Logger("e2e")
	waitFor(t, 20*time.Second, "the record at the remote syslog server", func() bool {
		log.Warn("remote syslog check")
		return bytes.Contains([]byte(sink.String()), []byte("remote syslog check"))
	})
	if s := sink.String(); !bytes.Contains([]byte(s), []byte("<28>1 ")) || !bytes.Contains([]byte(s), []byte(" testgw e2e ")) {
		t.Errorf("remote syslog datagrams are not RFC 5424 from testgw/e2e (daemon.warning = <28>):\n%s", s)
	}
	waitFor(t, 60*time.Second, "the ISP's lease for host name testgw", func() bool {
		return bytes.Contains([]byte(far.Leases()), []byte("testgw"))
	})
	waitFor(t, 60*time.Second, "time sync from the configured server", func() bool { return f.Clock.Synced() })
	// The clock was unset until now: the job may not have run before.
	waitFor(t, 75*time.Second, "the crontab line's run", func() bool {
		return len(f.Ring.Records(syslog.Filter{Contains: "cron-ran at minute", Facility: syslog.AnyFacility})) > 0
	})
	j := f.Cron.Jobs()[0]
	if j.Runs == 0 || j.Failures != 0 || j.Last.Before(time.Now().Add(2*time.Hour)) {
		t.Errorf("cron job %+v: want a successful run on the synced clock (3 h ahead)", j)
	}
}

// TestFirmwareBadStoredConfig: a stored configuration that does not parse
// is reported on the console, the firmware runs on the defaults, and the
// bad blob stays until a commit replaces it.
func TestFirmwareBadStoredConfig(t *testing.T) {
	lan1, _ := openTAP(t, 1)
	b := &tapBoard{mem: &memStorage{items: map[string][]byte{firmware.StoreConfig: []byte("config system\n\toption 'unterminated\n")}},
		ports: []board.Port{{Name: "lan1", Role: board.LAN, NIC: lan1}}}
	console := &wantest.SyncBuffer{}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: console})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	if !bytes.Contains([]byte(console.String()), []byte("firmware: configuration:")) {
		t.Errorf("console does not report the bad configuration:\n%s", console.String())
	}
	if got := f.Router.LANAddr().String(); got != "192.168.1.1/24" {
		t.Errorf("LAN address %s, want the default", got)
	}
	if blob, _ := b.mem.item(firmware.StoreConfig).Load(); !bytes.Contains(blob, []byte("unterminated")) {
		t.Errorf("the bad blob was overwritten before any commit: %q", blob)
	}
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// TestFirmwareLANChange: committing a new LAN address applies at once: a
// new client's lease is in the new subnet, and the router answers ping,
// DNS (its own name), HTTP and SSH's port at the new address.
func TestFirmwareLANChange(t *testing.T) {
	lan1, lan1Dev := openTAP(t, 1)
	lan2, lan2Dev := openTAP(t, 2)
	b := &tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{
		{Name: "lan1", Role: board.LAN, NIC: lan1}, {Name: "lan2", Role: board.LAN, NIC: lan2}}}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: &wantest.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	before := wantest.NewClient(t, lan1Dev)
	if a := wantest.Addr(before.DHCP(t, 60*time.Second)); !netip.MustParsePrefix("192.168.1.0/24").Contains(a) {
		t.Fatalf("first lease %v", a)
	}
	for k, v := range map[string]string{"network.lan.ipaddr": "10.42.0.1", "network.lan.netmask": "255.255.255.0"} {
		if err := f.Config.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Config.Commit(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the new LAN address", func() bool {
		return f.Router.LANAddr() == netip.MustParsePrefix("10.42.0.1/24")
	})
	c := wantest.NewClient(t, lan2Dev)
	lease := c.DHCP(t, 60*time.Second)
	if a := wantest.Addr(lease); !netip.MustParsePrefix("10.42.0.0/24").Contains(a) || !strings.Contains(lease, "router=10.42.0.1") {
		t.Fatalf("lease after the change: %s", lease)
	}
	c.NS.Must(t, "ping", "-c", "1", "-W", "5", "10.42.0.1")
	if out := c.NS.Must(t, "dig", "+short", "+time=3", "@10.42.0.1", "gowrt.lan"); strings.TrimSpace(out) != "10.42.0.1" {
		t.Errorf("gowrt.lan answers %q at the new address", out)
	}
	if out := c.NS.Must(t, "curl", "-s", "--max-time", "10", "http://10.42.0.1/"); !strings.Contains(out, "10.42.0.1/24") {
		t.Errorf("the web UI at the new address does not show it:\n%.400s", out)
	}
	if out, err := c.NS.Exec(10*time.Second, "bash", "-c", "exec 3<>/dev/tcp/10.42.0.1/22 && head -c 7 <&3"); err != nil || !strings.HasPrefix(out, "SSH-2.0") {
		t.Errorf("SSH at the new address: %v %q", err, out)
	}
	if out, err := c.NS.Exec(5*time.Second, "ping", "-c", "1", "-W", "2", "192.168.1.1"); err == nil {
		t.Errorf("the old address still answers:\n%s", out)
	}
}
