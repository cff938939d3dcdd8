package sta_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// recorder keeps what goes over the air, for seeds.
type recorder struct{ frames [][]byte }

func (r *recorder) Receive(f []byte) { r.frames = append(r.frames, append([]byte(nil), f...)) }
func (r *recorder) Tick(time.Time)   {}

// FuzzStationReceive feeds arbitrary frames to an authorized 4-address
// station (data, EAPOL, group and beacon paths reachable); it must never
// panic. Seeds: every frame of its association and a data exchange.
func FuzzStationReceive(f *testing.F) {
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0)})
	if err != nil {
		f.Fatal(err)
	}
	rec := &recorder{}
	m.Attach(rec)
	bssid := wlan.MAC{2, 0, 0, 0, 1, 0}
	a := startAPConfig(f, m, bssid, "gowrt-sta", true)
	s, err := sta.New(sta.Config{Addr: wlan.MAC{2, 0, 0, 0, 2, 0}, SSID: "gowrt-sta", Passphrase: passphrase, WDS: true})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Start(wlantest.NewRadio(m, wlantest.RadioConfig{Addr: wlan.MAC{2, 0, 0, 0, 2, 0}, Tick: s}), m.Now()); err != nil {
		f.Fatal(err)
	}
	m.Run(time.Second)
	if s.State() != sta.Authorized {
		f.Fatalf("station %v", s.State())
	}
	eth := append([]byte{2, 0, 0, 0, 2, 0, 2, 0xd5, 0, 0, 0, 1, 0x08, 0x00}, make([]byte, 40)...)
	_ = a.SendFromDS(eth)
	_ = a.SendFromDS(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, eth[6:]...))
	m.Run(time.Millisecond)
	for _, fr := range rec.frames {
		f.Add(fr)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		s.Receive(frame, nil)
		rec.frames = rec.frames[:0]
	})
}
