package sta_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

const passphrase = "correct horse battery"

func startAP(t *testing.T, m *medium.Medium, bssid wlan.MAC, ssid string) *ap.AP {
	return startAPConfig(t, m, bssid, ssid, false)
}

func startAPConfig(t testing.TB, m *medium.Medium, bssid wlan.MAC, ssid string, wds bool) *ap.AP {
	a, err := ap.New(ap.Config{BSSID: bssid, SSID: ssid, Passphrase: passphrase, Channel: 1, WDS: wds})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(wlantest.NewRadio(m, wlantest.RadioConfig{Addr: bssid, Tick: a}), m.Now()); err != nil {
		t.Fatal(err)
	}
	return a
}

// The station keeps scanning past a network with another SSID, joins
// the one it is configured for, and walks the states to authorized.
func TestJoinsOnlyItsSSID(t *testing.T) {
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	startAP(t, m, wlan.MAC{2, 0, 0, 0, 9, 9}, "someone-else")
	s, err := sta.New(sta.Config{Addr: wlan.MAC{2, 0, 0, 0, 2, 0}, SSID: "gowrt-sta", Passphrase: passphrase})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(wlantest.NewRadio(m, wlantest.RadioConfig{Addr: wlan.MAC{2, 0, 0, 0, 2, 0}, Tick: s}), m.Now()); err != nil {
		t.Fatal(err)
	}
	m.Run(500 * time.Millisecond)
	if s.State() != sta.Scanning {
		t.Fatalf("state %v next to a foreign network", s.State())
	}
	if err := s.Send(make([]byte, 60)); err != sta.ErrNotAuthorized {
		t.Fatalf("Send while scanning: %v", err)
	}
	mine := wlan.MAC{2, 0, 0, 0, 1, 0}
	startAP(t, m, mine, "gowrt-sta")
	m.Run(time.Second)
	if s.State() != sta.Authorized || s.BSSID() != mine || s.AID() != 1 {
		t.Fatalf("state %v bssid %v aid %d", s.State(), s.BSSID(), s.AID())
	}
	if s.Stats.Beacons.Load() == 0 || s.LastTSF() == 0 {
		t.Errorf("beacons %d, TSF %d", s.Stats.Beacons.Load(), s.LastTSF())
	}
	if s.State().String() != "authorized" {
		t.Error(s.State().String())
	}
}
