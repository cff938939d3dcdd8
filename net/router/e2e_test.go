//go:build linux && !mips && !mipsle

package router_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/netns"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/httpd"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/net/router"
	"github.com/gowrt/gowrt/net/tap"
	"gvisor.dev/gvisor/pkg/tcpip"
)

// lanHost is a Linux host in its own namespace, cabled by a TAP device to
// one router port.
type lanHost struct {
	ns  *netns.NS
	nic *tap.NIC
	dev string
}

func newHost(t testing.TB, i int) *lanHost {
	t.Helper()
	ns := netns.New(t)
	d, err := tap.Open("")
	if err != nil {
		t.Fatal(err)
	}
	return &lanHost{ns: ns, nic: tap.NewNIC(d, gnet.MAC{0x02, 0x67, 0x77, 0, 0, byte(i)}), dev: d.Name()}
}

// plug moves the host's end into its namespace with addr and brings it up.
func (h *lanHost) plug(t testing.TB, addr string) { h.ns.Adopt(t, h.dev, addr) }

func (h *lanHost) ping(dst string) error {
	out, err := h.ns.Exec(15*time.Second, "ping", "-c", "2", "-i", "0.2", "-W", "2", dst)
	if err != nil {
		return fmt.Errorf("ping %s: %v\n%s", dst, err, out)
	}
	return nil
}

// TestRouterLAN: two Linux hosts on two LAN ports ping the router, fetch
// its status page, and reach each other through the software bridge.
func TestRouterLAN(t *testing.T) {
	a, b, w := newHost(t, 1), newHost(t, 2), newHost(t, 3)
	r := startRouter(t, router.Config{Board: "test", LAN: []router.Port{
		{Name: "lan1", NIC: a.nic}, {Name: "lan2", NIC: b.nic}}, WAN: &router.Port{Name: "wan", NIC: w.nic}})
	a.plug(t, "192.168.1.10/24")
	b.plug(t, "192.168.1.20/24")
	w.plug(t, "")

	if err := a.ping("192.168.1.1"); err != nil {
		t.Fatal(err)
	}
	out := a.ns.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/")
	for _, want := range []string{"gowrt", "uptime", "lan1", "lan2", "wan", "up 1000 Mbit/s"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status page lacks %q:\n%s", want, out)
		}
	}
	before := r.Bridge().Forwarded()
	if err := a.ping("192.168.1.20"); err != nil {
		t.Fatalf("LAN hosts cannot reach each other through br-lan: %v", err)
	}
	if r.Bridge().Forwarded() == before {
		t.Fatal("lan1→lan2 traffic was not forwarded by the bridge")
	}
	js := a.ns.Must(t, "curl", "-sS", "--max-time", "10", "http://192.168.1.1/status.json")
	if !strings.Contains(js, `"name":"lan2"`) || !strings.Contains(js, `"role":"wan"`) {
		t.Fatalf("status.json: %s", js)
	}
	if out, err := a.ns.Exec(10*time.Second, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "http://192.168.1.1/nope"); err != nil || out != "404" {
		t.Fatalf("unknown path: %q %v", out, err)
	}
}

// TestRouterVLAN: lan3 is a trunk carrying VLAN 10 tagged, lan4 an access
// port of VLAN 10. The access host (Linux) reaches the trunk host in VLAN 10;
// it reaches neither the VLAN 1 host nor the router, whose host port is in
// VLAN 1 only.
//
// The trunk host is a gVisor stack on a virtual cable that tags and
// untags VLAN 10 itself: this machine's kernel has no 802.1Q module, so a
// Linux VLAN interface cannot be the trunk end.
func TestRouterVLAN(t *testing.T) {
	a, access := newHost(t, 1), newHost(t, 4)
	lan3, far := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 3}},
		nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 1, 3}})
	trunk, _ := nictest.NewStack(t, &vlanNIC{NIC: far, vid: 10}, tcpip.AddrFrom4([4]byte{192, 168, 10, 3}))
	startRouter(t, router.Config{Board: "test", LAN: []router.Port{
		{Name: "lan1", NIC: a.nic},
		{Name: "lan3", NIC: lan3, VLANs: bridge.PortVLANs{Tagged: []uint16{10}}},
		{Name: "lan4", NIC: access.nic, VLANs: bridge.PortVLANs{PVID: 10, Untagged: []uint16{10}}},
	}})
	a.plug(t, "192.168.1.10/24")
	access.plug(t, "192.168.10.4/24")

	if err := access.ping("192.168.10.3"); err != nil {
		t.Fatalf("VLAN 10 access → trunk: %v", err)
	}
	if err := nictest.Ping(trunk, tcpip.AddrFrom4([4]byte{192, 168, 10, 4}), []byte("vlan10"), 5*time.Second); err != nil {
		t.Fatalf("VLAN 10 trunk → access: %v", err)
	}
	// Give the access host a VLAN 1 address too: its frames still enter
	// the bridge in VLAN 10, so VLAN 1 stays unreachable.
	access.ns.Must(t, "ip", "addr", "add", "192.168.1.44/24", "dev", access.dev)
	if err := access.ping("192.168.1.10"); err == nil {
		t.Fatal("a VLAN 10 access port reached a VLAN 1 host")
	}
	if err := access.ping("192.168.1.1"); err == nil {
		t.Fatal("a VLAN 10 access port reached the router's VLAN 1 address")
	}
	if far.TxDone.Load() == 0 {
		t.Fatal("no tagged frames crossed the trunk")
	}
}

// TestRouterLinkFlap: pulling lan2's cable stops traffic to it; plugging
// it back restores it.
func TestRouterLinkFlap(t *testing.T) {
	a, b := newHost(t, 1), newHost(t, 2)
	r := startRouter(t, router.Config{Board: "test", LAN: []router.Port{
		{Name: "lan1", NIC: a.nic}, {Name: "lan2", NIC: b.nic}}})
	a.plug(t, "192.168.1.10/24")
	b.plug(t, "192.168.1.20/24")
	if err := a.ping("192.168.1.20"); err != nil {
		t.Fatal(err)
	}
	if err := b.nic.SetCarrier(false); err != nil {
		t.Fatal(err)
	}
	if err := a.ping("192.168.1.20"); err == nil {
		t.Fatal("ping crossed a port whose cable is pulled")
	}
	if st := r.Status(); st.Ports[1].LinkUp {
		t.Fatal("status page shows lan2 up with its cable pulled")
	}
	if err := b.nic.SetCarrier(true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := a.ping("192.168.1.20")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the cable came back: %v", err)
		}
	}
}

// TestRouterBroadcastStorm: a LAN host floods broadcasts; storm control
// drops and counts what exceeds the port's flood rate, unicast between
// the hosts still crosses the bridge, and the status page still answers.
func TestRouterBroadcastStorm(t *testing.T) {
	a, b := newHost(t, 1), newHost(t, 2)
	r := startRouter(t, router.Config{Board: "test", FloodRate: 500, LAN: []router.Port{
		{Name: "lan1", NIC: a.nic}, {Name: "lan2", NIC: b.nic}}})
	a.plug(t, "192.168.1.10/24")
	b.plug(t, "192.168.1.20/24")
	a.ns.Must(t, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_broadcasts=0")
	storm := make(chan error, 1)
	go func() {
		// Bounded: at most 40000 broadcast echo requests or 8 seconds.
		_, err := b.ns.Exec(15*time.Second, "ping", "-b", "-f", "-c", "40000", "-w", "8", "-q", "192.168.1.255")
		storm <- err
	}()
	time.Sleep(500 * time.Millisecond)
	for i := 0; i < 3; i++ {
		out, err := a.ns.Exec(10*time.Second, "curl", "-sS", "--max-time", "5", "http://192.168.1.1/")
		if err != nil || !strings.Contains(out, "gowrt") {
			t.Fatalf("status page during the storm (try %d): %v\n%s", i, err, out)
		}
	}
	if err := a.ping("192.168.1.20"); err != nil {
		t.Fatalf("unicast between the hosts during the storm: %v", err)
	}
	<-storm
	flooded, dropped := r.Bridge().Flooded(), r.Bridge().Stats.Dropped(bridge.ReasonStorm)
	t.Logf("storm: %d frames flooded, %d dropped by storm control", flooded, dropped)
	if flooded < 100 || dropped == 0 {
		t.Fatalf("%d frames flooded, %d storm drops: the storm did not happen or was not limited", flooded, dropped)
	}
	if st := r.Status(); st.Drops["storm"] != dropped {
		t.Fatalf("status page shows %d storm drops, the bridge counted %d", st.Drops["storm"], dropped)
	}
}

// TestRouterPortCounters: the status page shows every port's own
// counters, WAN included (it used to show 0 for WAN), and frames a port
// refuses as too long are counted on it with their reason.
func TestRouterPortCounters(t *testing.T) {
	a, w := newHost(t, 1), newHost(t, 3)
	r := startRouter(t, router.Config{Board: "test", LAN: []router.Port{{Name: "lan1", NIC: a.nic}},
		WAN: &router.Port{Name: "wan", NIC: w.nic}})
	a.plug(t, "192.168.1.10/24")
	w.plug(t, "10.0.0.2/24")
	if err := a.ping("192.168.1.1"); err != nil {
		t.Fatal(err)
	}
	a.ns.Must(t, "ip", "link", "set", "dev", a.dev, "mtu", "9000")
	for _, s := range []string{"1558", "8958"} { // 1600- and 9000-byte frames
		_, _ = a.ns.Exec(10*time.Second, "ping", "-q", "-c", "1", "-s", s, "-W", "1", "192.168.1.1")
	}
	w.ns.Must(t, "sysctl", "-qw", "net.ipv4.icmp_echo_ignore_broadcasts=0")
	_, _ = w.ns.Exec(10*time.Second, "ping", "-b", "-c", "3", "-i", "0.2", "-W", "1", "10.0.0.255")
	st := r.Status()
	lan, wan := st.Ports[0], st.Ports[1]
	if lan.Drops["rx-oversize"] != 2 || lan.RxFrames == 0 || lan.TxFrames == 0 {
		t.Fatalf("lan1: %+v, want 2 rx-oversize drops and traffic both ways", lan)
	}
	if wan.Role != "wan" || wan.RxFrames < 3 || wan.RxBytes < 3*98 {
		t.Fatalf("wan: %+v, want the 3 broadcast pings counted", wan)
	}
	if c := w.nic.Counters(); wan.RxFrames != c.RxFrames {
		t.Fatalf("wan shows %d frames received, its NIC counted %d", wan.RxFrames, c.RxFrames)
	}
}

func TestConfigErrors(t *testing.T) {
	nic := &nullNIC{}
	for name, c := range map[string]router.Config{
		"no LAN":         {},
		"nil NIC":        {LAN: []router.Port{{Name: "lan1"}}},
		"duplicate name": {LAN: []router.Port{{Name: "x", NIC: nic}, {Name: "x", NIC: nic}}},
		"IPv6 LAN":       {LAN: []router.Port{{Name: "lan1", NIC: nic}}, LANAddr: mustPrefix("fd00::1/64")},
		"network addr":   {LAN: []router.Port{{Name: "lan1", NIC: nic}}, LANAddr: mustPrefix("192.168.1.0/24")},
	} {
		if _, err := router.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The status handler rejects writes.
func TestStatusMethod(t *testing.T) {
	r, err := router.New(router.Config{LAN: []router.Port{{Name: "lan1", NIC: &nullNIC{}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		if rec := serveStatus(r, m, "/"); rec.code != httpd.StatusMethodNotAllowed || rec.h.Get("Allow") != "GET, HEAD" {
			t.Fatalf("%s /: %d, Allow %q", m, rec.code, rec.h.Get("Allow"))
		}
	}
	if rec := serveStatus(r, "GET", "/nothing"); rec.code != httpd.StatusNotFound {
		t.Fatalf("GET /nothing: %d", rec.code)
	}
}
