//go:build linux && !mips && !mipsle

package wlantest_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/internal/netns"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/router"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// The test matrix, as ath10k's raw mode was validated: crypto
// {open, WPA2-CCMP in software, WPA2-CCMP in the key cache} × topology
// {1 AP + 1 station; the station in 4-address mode bridging a LAN of two
// hosts; the same with the AP's traffic in VLAN 10 on br-lan}. The AP is
// a bridge port of the real router (net/router, with its DHCP server);
// every host is Linux in a network namespace on a TAP device: a LAN host
// on a router port, and the hosts behind the station. Each host behind
// the station gets its address from the router with ISC dhclient, then
// every pair pings both ways. For the software and hardware crypto 1:1
// cases, tshark decrypts the medium's capture.

const (
	ssid       = "gowrt-matrix"
	passphrase = "matrix passphrase 16"
	vid        = 10
)

var (
	bssid   = wlan.MAC{0x02, 0x67, 0x77, 0xa0, 0, 1}
	staMAC  = wlan.MAC{0x02, 0x67, 0x77, 0xa0, 0, 2}
	lanAddr = "192.168.1.10"
)

type cryptoCase struct {
	name  string
	open  bool
	place ap.CryptoPlacement
	// ht: the AP and the station run HT20 with WMM (short GI, two
	// streams): QoS data in A-MPDUs after the ADDBA handshake.
	ht bool
}

type topology int

const (
	oneToOne topology = iota
	fourAddr
	fourAddrVLAN
)

func (tp topology) String() string {
	return [...]string{"1to1", "4addr", "4addr-vlan"}[tp]
}

func TestMatrix(t *testing.T) {
	netns.RequireRoot(t)
	for _, c := range []cryptoCase{{name: "open", open: true}, {name: "ccmp-sw", place: ap.CryptoSoftware}, {name: "ccmp-hw", place: ap.CryptoHardware}} {
		for _, tp := range []topology{oneToOne, fourAddr, fourAddrVLAN} {
			t.Run(c.name+"/"+tp.String(), func(t *testing.T) { runCase(t, c, tp) })
		}
	}
	// The HT column: each crypto placement with HT, 1:1 (the station's
	// own traffic goes through the scheduler both ways) and, with the key
	// cache, 4-address mode (an HT station bridging a LAN keeps to
	// 4-address frames outside the scheduler).
	for _, c := range []cryptoCase{{name: "open-ht", open: true, ht: true}, {name: "ccmp-sw-ht", place: ap.CryptoSoftware, ht: true},
		{name: "ccmp-hw-ht", place: ap.CryptoHardware, ht: true}} {
		for _, tp := range []topology{oneToOne, fourAddr} {
			if tp == fourAddr && c.place != ap.CryptoHardware {
				continue
			}
			t.Run(c.name+"/"+tp.String(), func(t *testing.T) { runCase(t, c, tp) })
		}
	}
}

// host is a Linux host in a namespace on a TAP device.
type host struct {
	ns   *netns.NS
	nic  *tap.NIC
	dev  string
	addr string
}

func newHost(t *testing.T, i int) *host {
	t.Helper()
	ns := netns.New(t)
	d, err := tap.Open("")
	if err != nil {
		t.Fatal(err)
	}
	return &host{ns: ns, nic: tap.NewNIC(d, gnet.MAC{0x02, 0x67, 0x77, 0xb0, 0, byte(i)}), dev: d.Name()}
}

func (h *host) ping(t *testing.T, dst string) {
	t.Helper()
	out, err := h.ns.Exec(20*time.Second, "ping", "-c", "3", "-i", "0.2", "-W", "3", dst)
	if err != nil {
		t.Errorf("%s (%s) ping %s: %v\n%s", h.ns.Name, h.addr, dst, err, out)
	}
}

// dhcp runs dhclient once on the host's interface with a script that
// records the lease, then configures the address it got.
func (h *host) dhcp(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nenv > "+dir+"/env.$reason.tmp && mv "+dir+"/env.$reason.tmp "+dir+"/env.$reason\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", h.ns.Name, "/usr/sbin/dhclient", "-1", "-d", "-v",
		"-sf", script, "-lf", filepath.Join(dir, "leases"), "-pf", filepath.Join(dir, "pid"), h.dev)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(40 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "env.BOUND"))
		if err == nil {
			env := map[string]string{}
			for _, l := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					env[k] = strings.Trim(v, "'")
				}
			}
			ip := net.ParseIP(env["new_ip_address"]).To4()
			mask := net.IPMask(net.ParseIP(env["new_subnet_mask"]).To4())
			if ip == nil || mask == nil || !strings.HasPrefix(ip.String(), "192.168.1.") {
				t.Fatalf("lease %v", env)
			}
			if env["new_routers"] != "192.168.1.1" {
				t.Errorf("lease router %q, want the router 192.168.1.1", env["new_routers"])
			}
			ones, _ := mask.Size()
			h.addr = ip.String()
			h.ns.Must(t, "ip", "addr", "add", fmt.Sprintf("%s/%d", h.addr, ones), "dev", h.dev)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: dhclient never bound:\n%s", h.ns.Name, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runCase(t *testing.T, c cryptoCase, tp topology) {
	var capture bytes.Buffer
	// 2.4 GHz timing; the radios are wlan/medium's SimRadios: EDCA,
	// airtime, ACKs and retries, a key cache.
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0), Seed: 7, Capture: &capture, PHY: airtime.TwoGHz(true)})
	if err != nil {
		t.Fatal(err)
	}
	// The access point.
	acfg := ap.Config{BSSID: bssid, SSID: ssid, Passphrase: passphrase, Open: c.open, Crypto: c.place, Channel: 6,
		WDS: tp != oneToOne}
	if tp == fourAddrVLAN {
		acfg.VLAN = vid
	}
	if c.ht {
		acfg.HT = &ap.HTConfig{SGI: true, Streams: 2, AMSDU: true}
	}
	a, err := ap.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	ch6 := radio.Channel{Number: 6}
	apRadio, err := m.NewRadio(medium.RadioConfig{Addr: bssid, Channel: ch6})
	if err != nil {
		t.Fatal(err)
	}
	m.Attach(wlantest.TickOnly{T: a})
	if err := a.Start(apRadio, m.Now()); err != nil {
		t.Fatal(err)
	}

	// The router: a LAN host on lan1, the AP on wlan0.
	lan := newHost(t, 1)
	rcfg := router.Config{Board: "test", LAN: []router.Port{{Name: "lan1", NIC: lan.nic}, {Name: "wlan0", NIC: a.NIC()}}}
	if tp == fourAddrVLAN {
		// br-lan carries VLAN 10: the router and lan1 untagged in it,
		// the AP's port a trunk that the AP tags its traffic for.
		v := bridge.PortVLANs{PVID: vid, Untagged: []uint16{vid}}
		rcfg.HostVLANs = v
		rcfg.LAN[0].VLANs = v
		rcfg.LAN[1].VLANs = bridge.PortVLANs{Tagged: []uint16{vid}}
	}
	r, err := router.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	lan.addr = lanAddr
	lan.ns.Adopt(t, lan.dev, lanAddr+"/24")

	// The station.
	// Crypto in the key cache on both ends in the hardware case.
	scfg := sta.Config{Addr: staMAC, SSID: ssid, Passphrase: passphrase, Open: c.open, WDS: tp != oneToOne,
		HardwareCrypto: c.place == ap.CryptoHardware}
	if c.ht {
		scfg.HT = &sta.HTConfig{SGI: true, Streams: 2, AMSDU: true}
	}
	s, err := sta.New(scfg)
	if err != nil {
		t.Fatal(err)
	}
	staNIC := s.NIC()
	staRadio, err := m.NewRadio(medium.RadioConfig{Addr: staMAC, Channel: ch6})
	if err != nil {
		t.Fatal(err)
	}
	m.Attach(wlantest.TickOnly{T: s})
	if err := s.Start(staRadio, m.Now()); err != nil {
		t.Fatal(err)
	}
	stop := wlantest.RunRealtime(m, time.Millisecond)
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); s.State() != sta.Authorized; {
		if time.Now().After(deadline) {
			t.Fatalf("station %v after 10 s", s.State())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Behind the station: one host with the station's address (a laptop
	// with its Wi-Fi), or a bridge with two hosts (4-address mode).
	var behind []*host
	if tp == oneToOne {
		h := newHost(t, 2)
		if err := wlantest.Cable(h.nic, staNIC); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.nic.Stop(); staNIC.Stop() })
		h.ns.Adopt(t, h.dev, "")
		h.ns.Must(t, "ip", "link", "set", h.dev, "address", staMAC.String())
		behind = append(behind, h)
	} else {
		br, err := bridge.New(bridge.Config{MAC: gnet.MAC{0x02, 0x67, 0x77, 0xc0, 0, 1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := br.AttachNIC(staNIC, bridge.DefaultVLANs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(staNIC.Stop)
		for i := 0; i < 2; i++ {
			h := newHost(t, 3+i)
			if _, err := br.AttachNIC(h.nic, bridge.DefaultVLANs); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.nic.Stop)
			h.ns.Adopt(t, h.dev, "")
			behind = append(behind, h)
		}
	}

	// A lease from the router for every host behind the station.
	for _, h := range behind {
		h.dhcp(t)
	}
	// Every pair pings, both ways.
	for _, h := range behind {
		h.ping(t, "192.168.1.1")
		h.ping(t, lanAddr)
		lan.ping(t, h.addr)
	}
	if len(behind) == 2 {
		behind[0].ping(t, behind[1].addr)
		behind[1].ping(t, behind[0].addr)
	}
	stop()

	// What the AP saw.
	st := &a.Stats
	if st.RxData.Load() == 0 || st.TxData.Load() == 0 {
		t.Errorf("AP data: %d to the DS, %d to stations", st.RxData.Load(), st.TxData.Load())
	}
	if st.Replays.Load() != 0 || st.CCMPErrors.Load() != 0 {
		t.Errorf("AP dropped %d replays, %d CCMP errors", st.Replays.Load(), st.CCMPErrors.Load())
	}
	infos := a.Stations()
	if len(infos) != 1 || infos[0].WDS != (tp != oneToOne) || infos[0].HardwareKey != (c.place == ap.CryptoHardware && !c.open) {
		t.Errorf("station table %+v", infos)
	}
	if tp != oneToOne && infos[0].Behind < 2 {
		t.Errorf("%d addresses learned behind the station, want the bridge's hosts", infos[0].Behind)
	}
	as, ss := apRadio.Stats(), staRadio.Stats()
	if hw := c.place == ap.CryptoHardware && !c.open; hw != (as.RxDecrypted != 0) || hw != (ss.RxDecrypted != 0) {
		t.Errorf("key caches decrypted %d (AP) and %d (station) frames, hardware crypto %v", as.RxDecrypted, ss.RxDecrypted, hw)
	}
	if as.TxAcked == 0 || ss.TxAcked == 0 {
		t.Errorf("acknowledged requests: AP %d, station %d", as.TxAcked, ss.TxAcked)
	}
	t.Logf("AP radio %+v", as)
	if c.ht {
		htChecks(t, a, s, tp)
	}
	if err := m.CaptureErr(); err != nil {
		t.Fatal(err)
	}
	if !c.open && tp == oneToOne {
		tsharkDecrypts(t, capture.Bytes())
	}
}

// tsharkDecrypts: given only the passphrase and SSID, tshark follows the
// 4-way handshake and decrypts the CCMP frames to the DHCP exchange and
// the pings in both directions.
func tsharkDecrypts(t *testing.T, pcap []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "matrix.pcap")
	if err := os.WriteFile(p, pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(pw string) (eapol map[string]int, kinds map[string]int) {
		cmd := exec.Command("tshark", "-o", "wlan.enable_decryption:TRUE",
			"-o", `uat:80211_keys:"wpa-pwd","`+pw+":"+ssid+`"`,
			"-r", p, "-T", "fields", "-E", "separator=|",
			"-e", "wlan.fc.protected", "-e", "wlan_rsna_eapol.keydes.key_info", "-e", "dhcp.option.dhcp", "-e", "icmp.type", "-e", "wlan.fc.ds")
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tshark: %v\n%s", err, out)
		}
		kinds, eapol = map[string]int{}, map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(l, "|")
			if len(f) != 5 {
				continue
			}
			if f[1] != "" {
				eapol[f[1]]++
			}
			if f[0] != "1" {
				continue
			}
			if f[2] != "" {
				kinds["dhcp"+f[2]]++ // 1 discover, 2 offer, 3 request, 5 ack
			}
			if f[3] != "" {
				kinds["icmp"+f[3]+"/"+f[4]]++ // type / DS bits (0x01 to the AP, 0x02 from it)
			}
		}
		return eapol, kinds
	}
	eapol, kinds := run(passphrase)
	// The 4-way handshake's Key Information, messages 1 to 4 (WPA2,
	// AES-CCMP; as wlan/wpa's tshark test reads them).
	for _, ki := range []string{"0x008a", "0x010a", "0x13ca", "0x030a"} {
		if eapol[ki] == 0 {
			t.Errorf("tshark saw no EAPOL-Key frame with key info %s: %v", ki, eapol)
		}
	}
	for _, k := range []string{"dhcp1", "dhcp2", "dhcp3", "dhcp5", "icmp8/0x01", "icmp0/0x02", "icmp8/0x02", "icmp0/0x01"} {
		if kinds[k] == 0 {
			t.Errorf("tshark decrypted no %s frame: %v", k, kinds)
		}
	}
	if _, bad := run("not the passphrase"); len(bad) != 0 {
		t.Errorf("tshark decrypted with a wrong passphrase: %v", bad)
	}
}

// htChecks: the station associated as HT; in 1:1 its traffic took Block
// Ack agreements for TID 0 (best effort) both ways and went through the
// schedulers, which athstats shows.
func htChecks(t *testing.T, a *ap.AP, s *sta.Station, tp topology) {
	t.Helper()
	infos := a.Stations()
	if on, caps := s.HT(); !on || len(infos) != 1 || !infos[0].HT || caps.MCS&0xffff != 0xffff || !caps.SGI || caps.HT40 {
		t.Fatalf("HT association: station %v caps %+v, AP table %+v", on, caps, infos)
	}
	var view strings.Builder
	if err := a.WriteStats(&view); err != nil {
		t.Fatal(err)
	}
	t.Logf("athstats:\n%s", view.String())
	if tp != oneToOne {
		return
	}
	if tx, rx := s.BlockAck(0); tx != ba.Established || rx != ba.Established {
		t.Errorf("station's agreements for TID 0: tx %v rx %v", tx, rx)
	}
	if !strings.Contains(view.String(), "tid 0 tx established rx established") || a.Stats.TxScheduled.Load() == 0 {
		t.Errorf("AP: %d MSDUs through the scheduler; view:\n%s", a.Stats.TxScheduled.Load(), view.String())
	}
}
