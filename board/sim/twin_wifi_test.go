package sim_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/wire"
	"github.com/gowrt/gowrt/board/sim"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/sta"
)

// TestTwinWifiAssociates: on the twins of the boards with a WMAC, an AP
// (wlan/ap) on the radio wire.Radios brought up, the real ar9300 driver
// on the WMAC's model, authorizes a simulated WPA2 station with CCMP in
// software and in the chip's key cache; the radio holds the chip awake
// while it runs and lets it go at Stop.
func TestTwinWifiAssociates(t *testing.T) {
	for _, b := range []*boardfile.Board{boardfile.TLWDR4300, boardfile.ArcherC7v2} {
		for _, place := range []ap.CryptoPlacement{ap.CryptoSoftware, ap.CryptoHardware} {
			t.Run(b.Name+"/"+place.String(), func(t *testing.T) {
				logs := &logSink{}
				tw, err := sim.NewTwin(b, sim.TwinConfig{Seed: 9, Log: logs.log,
					Stations: []sim.TwinStation{{SSID: "twin", Passphrase: "twin passphrase"}}})
				if err != nil {
					t.Fatal(err)
				}
				defer tw.Close()
				rs, err := tw.Radios()
				if err != nil {
					t.Fatal(err)
				}
				if len(rs) != 1 || rs[0].Name != "radio0" || rs[0].Band5G {
					t.Fatalf("radios %+v", rs)
				}
				r := rs[0].Radio
				a, err := ap.New(ap.Config{BSSID: r.Address(), SSID: "twin", Passphrase: "twin passphrase", Channel: 1, Crypto: place})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Start(r, time.Now()); err != nil {
					t.Fatal(err)
				}
				aw := r.(*wire.AwakeRadio)
				if aw.Power.Holds() < 1 {
					t.Errorf("the started radio holds the chip awake %d times", aw.Power.Holds())
				}
				s := tw.Stations()[0].Station
				deadline := time.Now().Add(15 * time.Second)
				// The station is Authorized once it has sent message 4 of the
				// handshake; the AP authorizes it only when that frame has
				// crossed the air and been processed, so wait for both.
				apAuthorized := func() bool {
					infos := a.Stations()
					return len(infos) == 1 && infos[0].Authorized
				}
				for s.State() != sta.Authorized || !apAuthorized() {
					if time.Now().After(deadline) {
						t.Fatalf("station %v after 15 s; AP stats beacons %d auth %d assoc %d; logs %v",
							s.State(), a.Stats.Beacons.Load(), a.Stats.Authenticated.Load(), a.Stats.Associated.Load(), logs.all())
					}
					a.Tick(time.Now())
					time.Sleep(20 * time.Millisecond)
				}
				if infos := a.Stations(); len(infos) != 1 || !infos[0].Authorized || infos[0].HardwareKey != (place == ap.CryptoHardware) {
					t.Errorf("station table %+v", infos)
				}
				a.Stop()
				r.Stop()
				if h := aw.Power.Holds(); h != 0 {
					t.Errorf("after Stop the chip is held %d times", h)
				}
				checkClean(t, tw, logs)
			})
		}
	}
}
