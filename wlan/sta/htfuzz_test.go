package sta_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// FuzzStationReceiveHT feeds arbitrary frames to an HT station with
// Block Ack agreements both ways (ADDBA, BAR, reordering, A-MSDU
// receive, CCMP in the key cache); the first byte picks the receive
// status. It must never panic. Seeds: everything on the air of a run
// with A-MPDUs and A-MSDUs both ways.
func FuzzStationReceiveHT(f *testing.F) {
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0)})
	if err != nil {
		f.Fatal(err)
	}
	rec := &recorder{}
	m.Attach(rec)
	ch := radio.Channel{Number: 36, Band5G: true, Width40: true, Above: true}
	bssid, addr := wlan.MAC{2, 0, 0, 0, 1, 0}, wlan.MAC{2, 0, 0, 0, 2, 0}
	a, err := ap.New(ap.Config{BSSID: bssid, SSID: "gowrt-ht", Passphrase: passphrase, Channel: 36, Crypto: ap.CryptoHardware,
		HT: &ap.HTConfig{Width40: true, Above: true, SGI: true, AMSDU: true}})
	if err != nil {
		f.Fatal(err)
	}
	ar, err := m.NewRadio(medium.RadioConfig{Addr: bssid, Channel: ch})
	if err != nil {
		f.Fatal(err)
	}
	m.Attach(wlantest.TickOnly{T: a})
	if err := a.Start(ar, m.Now()); err != nil {
		f.Fatal(err)
	}
	s, err := sta.New(sta.Config{Addr: addr, SSID: "gowrt-ht", Passphrase: passphrase, HardwareCrypto: true,
		HT: &sta.HTConfig{Width40: true, SGI: true, FiveGHz: true, AMSDU: true}})
	if err != nil {
		f.Fatal(err)
	}
	sr, err := m.NewRadio(medium.RadioConfig{Addr: addr, Channel: ch})
	if err != nil {
		f.Fatal(err)
	}
	m.Attach(wlantest.TickOnly{T: s})
	if err := s.Start(sr, m.Now()); err != nil {
		f.Fatal(err)
	}
	m.Run(time.Second)
	down := append([]byte{2, 0, 0, 0, 2, 0, 2, 0xd5, 0, 0, 0, 1, 0x08, 0x00, 0x45}, make([]byte, 300)...)
	up := append([]byte{2, 0xd5, 0, 0, 0, 1, 2, 0, 0, 0, 2, 0, 0x08, 0x00, 0x45}, make([]byte, 300)...)
	for i := 0; i < 1000; i++ {
		_ = a.SendFromDS(down)
		_ = s.Send(up)
		if i%50 == 0 {
			m.Run(time.Millisecond)
		}
	}
	m.Run(200 * time.Millisecond)
	if tx, rx := s.BlockAck(0); tx != ba.Established || rx != ba.Established {
		f.Fatalf("agreements tx %v rx %v", tx, rx)
	}
	if s.Stats.RxAMSDU.Load() == 0 {
		var b strings.Builder
		_ = a.WriteStats(&b)
		f.Fatalf("no A-MSDU received for the seeds\n%s\n%+v\n%+v", b.String(), ar.Stats(), sr.Stats())
	}
	for _, fr := range rec.frames {
		f.Add(append([]byte{0}, fr...))
		f.Add(append([]byte{1}, fr...))
	}
	sts := []*radio.RxStatus{nil, {Decrypted: true}, {DecryptErr: true}, {InAMPDU: true}}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		s.Receive(in[1:], sts[int(in[0])%len(sts)])
		m.Run(time.Millisecond)
		_ = s.Send(up)
		rec.frames = rec.frames[:0]
	})
}
