//go:build linux && !mips && !mipsle

package sim_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/sim"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/netns"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/sys/syslog"
	"github.com/gowrt/gowrt/wlan/sta"
)

// TestTwinWifi is `gowrt run -board tl-wdr4300` with Wi-Fi: the firmware
// on the TL-WDR4300's twin, its AP on the WMAC (the ar9300 driver on the
// WMAC's model, on a medium in real time) enabled by a committed WPA2
// configuration, CCMP in software and in the chip's key cache. A Linux
// namespace behind a simulated WPA2 station (its TAP device) gets its
// DHCP lease from the router over Wi-Fi (dhclient) and pings the router
// and a wired host on the LAN socket lan1, which got its lease too; the
// wired host pings it back. tshark, given the passphrase and SSID,
// decrypts the medium's capture to the DHCP exchange and the pings.
func TestTwinWifi(t *testing.T) {
	netns.RequireRoot(t)
	for i, crypto := range []string{"software", "hardware"} {
		t.Run(crypto, func(t *testing.T) { runTwinWifi(t, crypto, i) })
	}
}

func runTwinWifi(t *testing.T, crypto string, n int) {
	const ssid, pass = "twin-wifi", "twin wifi passphrase"
	pid := os.Getpid() % 100000
	tapLAN, tapSta := fmt.Sprintf("twf%d-%dl", pid, n), fmt.Sprintf("twf%d-%ds", pid, n)
	logs := &logSink{}
	var capture bytes.Buffer
	tw, err := sim.NewTwin(boardfile.TLWDR4300, sim.TwinConfig{TAPs: map[string]string{"lan1": tapLAN}, Seed: 23 + uint64(n), Log: logs.log,
		Stations: []sim.TwinStation{{TAP: tapSta, SSID: ssid, Passphrase: pass}}, WifiCapture: &capture}) // written by the medium's goroutine, read after Close
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tw.Close() })
	f, err := firmware.Start(context.Background(), firmware.Options{Board: tw, Version: "test", Console: &wantest.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	for _, kv := range [][2]string{{"wireless.radio0.disabled", "0"}, {"wireless.default_radio0.ssid", ssid},
		{"wireless.default_radio0.encryption", "psk2"}, {"wireless.default_radio0.key", pass},
		{"wireless.default_radio0.crypto", crypto}} {
		if err := f.Config.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Config.Commit(); err != nil {
		t.Fatal(err)
	}
	s := tw.Stations()[0].Station
	for deadline := time.Now().Add(20 * time.Second); s.State() != sta.Authorized; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			for _, r := range f.Ring.Records(syslog.Filter{Facility: syslog.AnyFacility}) {
				t.Logf("%s: %s", r.Service, r.Msg)
			}
			t.Fatalf("station %v after 20 s", s.State())
		}
	}

	wired := wantest.NewClient(t, tapLAN)
	lw := wired.DHCP(t, 30*time.Second)
	air := wantest.NewClient(t, tapSta)
	la := air.DHCP(t, 30*time.Second)
	if !strings.Contains(la, "router=192.168.1.1") {
		t.Fatalf("the station's lease %q is not the router's", la)
	}
	wiredAddr, airAddr := wantest.Addr(lw).String(), wantest.Addr(la).String()
	t.Logf("leases: wired %q, over Wi-Fi %q", lw, la)
	ping := func(c *wantest.Client, dst string) {
		t.Helper()
		if out, err := c.NS.Exec(20*time.Second, "ping", "-c", "3", "-i", "0.2", "-W", "3", dst); err != nil {
			t.Errorf("%s ping %s: %v\n%s", c.Link, dst, err, out)
		}
	}
	ping(air, "192.168.1.1")
	ping(air, wiredAddr)
	ping(wired, airAddr)

	a := f.APs()["radio0"]
	infos := a.Stations()
	if len(infos) != 1 || !infos[0].Authorized || infos[0].HardwareKey != (crypto == "hardware") {
		t.Errorf("station table %+v", infos)
	}
	if a.Stats.Replays.Load() != 0 || a.Stats.CCMPErrors.Load() != 0 {
		t.Errorf("AP dropped %d replays, %d CCMP errors", a.Stats.Replays.Load(), a.Stats.CCMPErrors.Load())
	}
	if n := tw.Misuses(); n != 0 {
		t.Errorf("%d hardware misuses:\n%v", n, logs.all())
	}
	_ = f.Stop()
	_ = tw.Close()
	tsharkDecryptsTwin(t, capture.Bytes(), ssid, pass)
}

// tsharkDecryptsTwin: the capture's CCMP frames decrypt, given the
// passphrase and SSID, to the DHCP exchange and pings both ways.
func tsharkDecryptsTwin(t *testing.T, pcap []byte, ssid, pass string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "twin.pcap")
	if err := os.WriteFile(p, pcap, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("tshark", "-o", "wlan.enable_decryption:TRUE", "-o", `uat:80211_keys:"wpa-pwd","`+pass+":"+ssid+`"`,
		"-r", p, "-T", "fields", "-E", "separator=|", "-e", "wlan.fc.protected", "-e", "dhcp.option.dhcp", "-e", "icmp.type")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	kinds := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "|")
		if len(f) != 3 || f[0] != "1" {
			continue
		}
		if f[1] != "" {
			kinds["dhcp"+f[1]]++
		}
		if f[2] != "" {
			kinds["icmp"+f[2]]++
		}
	}
	for _, k := range []string{"dhcp1", "dhcp2", "dhcp3", "dhcp5", "icmp8", "icmp0"} {
		if kinds[k] == 0 {
			t.Errorf("tshark decrypted no %s frame: %v", k, kinds)
		}
	}
}
