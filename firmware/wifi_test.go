//go:build linux && !mips && !mipsle

package firmware_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/firmware"
	"github.com/gowrt/gowrt/internal/wantest"
	"github.com/gowrt/gowrt/mgmt/shell"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/sys/syslog"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// wifiBoard is a board with one wired LAN port and one radio: a SimRadio
// on a medium run in real time.
type wifiBoard struct {
	tapBoard
	radios []board.Radio
}

func (b *wifiBoard) Radios() ([]board.Radio, error) { return b.radios, nil }

var (
	apAddr = wlan.MAC{0x02, 0x67, 0x77, 0xf0, 0, 1}
	staA   = wlan.MAC{0x02, 0x67, 0x77, 0xf0, 0, 2}
	staB   = wlan.MAC{0x02, 0x67, 0x77, 0xf0, 0, 3}
)

// newStation joins a station to m; received Ethernet frames go to rx.
func newStation(t *testing.T, m *medium.Medium, mu *sync.Mutex, addr wlan.MAC, pass string, rx func([]byte)) *sta.Station {
	t.Helper()
	s, err := sta.New(sta.Config{Addr: addr, SSID: "fw-wifi", Passphrase: pass, Receive: rx})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	r, err := m.NewRadio(medium.RadioConfig{Addr: addr, Channel: radio.Channel{Number: 6}})
	if err != nil {
		t.Fatal(err)
	}
	m.Attach(wlantest.TickOnly{T: s})
	if err := s.Start(r, m.Now()); err != nil {
		t.Fatal(err)
	}
	return s
}

// arpRequest asks who has 192.168.1.1, from src at 192.168.1.50.
func arpRequest(src wlan.MAC) []byte {
	f := make([]byte, 42)
	copy(f[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f[6:12], src[:])
	binary.BigEndian.PutUint16(f[12:], 0x0806)
	copy(f[14:22], []byte{0, 1, 8, 0, 6, 4, 0, 1}) // Ethernet, IPv4, request
	copy(f[22:28], src[:])
	copy(f[28:32], []byte{192, 168, 1, 50})
	copy(f[38:42], []byte{192, 168, 1, 1})
	return f
}

// TestFirmwareWifi: the wireless configuration drives the AP on the
// board's radio. Wi-Fi ships disabled; enabling it with WPA2 starts the
// AP, a station with the passphrase is authorized and reaches the router
// through br-lan (its ARP request for 192.168.1.1 is answered); a new
// passphrase deauthenticates it and only a station with the new one gets
// in; disabling stops the beacons.
func TestFirmwareWifi(t *testing.T) {
	m, err := medium.New(medium.Config{Start: time.Now(), Seed: 3, PHY: airtime.TwoGHz(true)})
	if err != nil {
		t.Fatal(err)
	}
	var mmu sync.Mutex // the medium's Attach against Run's goroutine
	apRadio, err := m.NewRadio(medium.RadioConfig{Addr: apAddr, Channel: radio.Channel{Number: 6}})
	if err != nil {
		t.Fatal(err)
	}
	lan, _ := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 1}}, nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 2}})
	lan.SetLink(true)
	b := &wifiBoard{tapBoard: tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{{Name: "lan1", Role: board.LAN, NIC: lan}}},
		radios: []board.Radio{{Name: "radio0", Radio: apRadio}}}
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: &wantest.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	stopAir := make(chan struct{})
	var airWG sync.WaitGroup
	airWG.Add(1)
	go func() { // the medium in real time
		defer airWG.Done()
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stopAir:
				return
			case <-tk.C:
				mmu.Lock()
				m.Run(time.Millisecond)
				mmu.Unlock()
			}
		}
	}()
	defer func() { close(stopAir); airWG.Wait() }()

	a := f.APs()["radio0"]
	if a == nil {
		t.Fatal("no AP on radio0")
	}
	commit := func(kv ...string) {
		t.Helper()
		for i := 0; i < len(kv); i += 2 {
			if err := f.Config.Set(kv[i], kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.Config.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	beacons := func() uint64 { mmu.Lock(); defer mmu.Unlock(); return apRadio.Stats().Beacons }
	time.Sleep(300 * time.Millisecond)
	if n := beacons(); n != 0 {
		t.Fatalf("%d beacons with Wi-Fi disabled (the default)", n)
	}

	commit("wireless.radio0.disabled", "0", "wireless.radio0.channel", "6", "wireless.default_radio0.ssid", "fw-wifi",
		"wireless.default_radio0.encryption", "psk2", "wireless.default_radio0.key", "first passphrase")
	var got sync.Mutex
	var replies [][]byte
	s := newStation(t, m, &mmu, staA, "first passphrase", func(eth []byte) {
		got.Lock()
		defer got.Unlock()
		if len(eth) >= 42 && binary.BigEndian.Uint16(eth[12:]) == 0x0806 && eth[21] == 2 {
			replies = append(replies, append([]byte(nil), eth...))
		}
	})
	waitFor(t, 10*time.Second, "station A authorized", func() bool { return s.State() == sta.Authorized })
	waitFor(t, 5*time.Second, "the router's ARP reply over Wi-Fi", func() bool {
		_ = s.Send(arpRequest(staA))
		time.Sleep(50 * time.Millisecond)
		got.Lock()
		defer got.Unlock()
		return len(replies) > 0
	})
	got.Lock()
	if r := replies[0]; !bytes.Equal(r[0:6], staA[:]) || !bytes.Equal(r[28:32], []byte{192, 168, 1, 1}) {
		t.Errorf("ARP reply %x", r)
	}
	got.Unlock()

	// A new passphrase: A is deauthenticated and stays out; B joins.
	deauths := a.Stats.Deauths.Load()
	commit("wireless.default_radio0.key", "second passphrase")
	waitFor(t, 5*time.Second, "station A deauthenticated", func() bool {
		return a.Stats.Deauths.Load() > deauths && s.State() != sta.Authorized
	})
	s2 := newStation(t, m, &mmu, staB, "second passphrase", nil)
	waitFor(t, 10*time.Second, "station B authorized", func() bool { return s2.State() == sta.Authorized })
	time.Sleep(2 * time.Second)
	if s.State() == sta.Authorized {
		t.Error("station A with the old passphrase got back in")
	}

	// athstats: the status page's Wi-Fi section and the shell command
	// show the AP (HT20 by default, OpenWrt's htmode).
	if w := f.Router.Status().Wifi; !strings.Contains(w, "radio0 (wlan0):") || strings.Contains(w, "no HT") {
		t.Errorf("status page Wi-Fi section %q", w)
	}
	var out bytes.Buffer
	if st := f.Shell.Exec(context.Background(), &shell.Session{Out: &out, Plain: true}, "athstats"); st != shell.StatusOK ||
		!strings.Contains(out.String(), "radio0 (wlan0):") {
		t.Errorf("athstats: status %d, %q", st, out.String())
	}

	// Disabled: no more beacons.
	commit("wireless.default_radio0.disabled", "1")
	waitFor(t, 5*time.Second, "the apply log", func() bool {
		return len(f.Ring.Records(syslog.Filter{Contains: "the AP stopped", Facility: syslog.AnyFacility})) > 0
	})
	n := beacons()
	time.Sleep(500 * time.Millisecond)
	if more := beacons() - n; more > 1 {
		t.Errorf("%d beacons after disabling", more)
	}
}

// TestFirmwareWifiAtBoot: a stored configuration with Wi-Fi enabled
// (open, hidden SSID, CCMP placement irrelevant) starts the AP at boot,
// with no commit; a station that names the SSID joins.
func TestFirmwareWifiAtBoot(t *testing.T) {
	m, err := medium.New(medium.Config{Start: time.Now(), Seed: 4, PHY: airtime.TwoGHz(true)})
	if err != nil {
		t.Fatal(err)
	}
	apRadio, err := m.NewRadio(medium.RadioConfig{Addr: apAddr, Channel: radio.Channel{Number: 11}})
	if err != nil {
		t.Fatal(err)
	}
	lan, _ := nictest.Pair(nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 1}}, nictest.Config{MAC: gnet.MAC{2, 0x67, 0x77, 0, 0, 2}})
	b := &wifiBoard{tapBoard: tapBoard{mem: &memStorage{items: map[string][]byte{}}, ports: []board.Port{{Name: "lan1", Role: board.LAN, NIC: lan}}},
		radios: []board.Radio{{Name: "radio0", Radio: apRadio}}}
	seedConfig(t, &b.tapBoard, map[string]string{"wireless.radio0.disabled": "0", "wireless.radio0.channel": "11",
		"wireless.default_radio0.ssid": "fw-wifi", "wireless.default_radio0.hidden": "1"}, nil)
	f, err := firmware.Start(context.Background(), firmware.Options{Board: b, Version: "test", Console: &wantest.SyncBuffer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()
	s, err := sta.New(sta.Config{Addr: staA, SSID: "fw-wifi", Open: true})
	if err != nil {
		t.Fatal(err)
	}
	sr, err := m.NewRadio(medium.RadioConfig{Addr: staA, Channel: radio.Channel{Number: 11}})
	if err != nil {
		t.Fatal(err)
	}
	m.AddTicker(s)
	if err := s.Start(sr, m.Now()); err != nil {
		t.Fatal(err)
	}
	stop := wlantest.RunRealtime(m, time.Millisecond)
	defer stop()
	waitFor(t, 10*time.Second, "the station authorized on the open, hidden network", func() bool { return s.State() == sta.Authorized })
}
