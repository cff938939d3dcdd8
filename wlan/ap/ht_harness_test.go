package ap_test

import (
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

// htBSS is an HT40 AP and one HT station over wlan/medium's SimRadio
// (the scheduler needs a radio that completes requests after Transmit
// returns), with Block Ack agreements for TID 0 both ways, A-MSDUs and
// CCMP as cfg places it.
type htBSS struct {
	m       *medium.Medium
	ap      *ap.AP
	sta     *sta.Station
	tap     *tap
	tapPort *medium.Radio
	toDS    int
	rx      int
}

var ht40 = radio.Channel{Number: 36, Band5G: true, Width40: true, Above: true}

func newHTBSS(t testing.TB, cfg ap.Config, scfg sta.Config) *htBSS {
	t.Helper()
	b := &htBSS{}
	var err error
	b.m, err = medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0), Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	b.tap = &tap{m: b.m}
	b.tapPort = b.m.Attach(b.tap)
	cfg.BSSID, cfg.SSID, cfg.Passphrase, cfg.Channel = apAddr, testSSID, testPassphrase, 36
	cfg.HT = &ap.HTConfig{Width40: true, Above: true, SGI: true, Streams: 2, AMSDU: cfg.Crypto == ap.CryptoHardware || cfg.Open}
	cfg.ToDS = func([]byte) { b.toDS++ }
	if b.ap, err = ap.New(cfg); err != nil {
		t.Fatal(err)
	}
	ar, err := b.m.NewRadio(medium.RadioConfig{Addr: apAddr, Channel: ht40})
	if err != nil {
		t.Fatal(err)
	}
	b.m.Attach(wlantest.TickOnly{T: b.ap})
	if err := b.ap.Start(ar, b.m.Now()); err != nil {
		t.Fatal(err)
	}
	scfg.Addr, scfg.SSID, scfg.Passphrase, scfg.Open = staAddr(0), testSSID, testPassphrase, cfg.Open
	scfg.HT = &sta.HTConfig{Width40: true, SGI: true, Streams: 2, FiveGHz: true, AMSDU: true}
	scfg.Receive = func([]byte) { b.rx++ }
	if b.sta, err = sta.New(scfg); err != nil {
		t.Fatal(err)
	}
	sr, err := b.m.NewRadio(medium.RadioConfig{Addr: staAddr(0), Channel: ht40})
	if err != nil {
		t.Fatal(err)
	}
	b.m.Attach(wlantest.TickOnly{T: b.sta})
	if err := b.sta.Start(sr, b.m.Now()); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Second)
	if b.sta.State() != sta.Authorized {
		t.Fatalf("HT station %v", b.sta.State())
	}
	// Traffic both ways starts the agreements; more of it fills
	// A-MPDUs (and A-MSDUs).
	for i := 0; i < 200; i++ {
		_ = b.ap.SendFromDS(ethICMP(staAddr(0), dsAddr, 1, 100, 0, uint16(i)))
		_ = b.sta.Send(ethICMP(dsAddr, staAddr(0), 100, 1, 8, uint16(i)))
		if i%20 == 0 {
			b.m.Run(time.Millisecond)
		}
	}
	b.m.Run(10 * time.Millisecond)
	tx, rx := b.sta.BlockAck(0)
	if tx != ba.Established || rx != ba.Established {
		t.Fatalf("agreements: station tx %v rx %v", tx, rx)
	}
	return b
}

// qosFrames are the QoS data frames the tap saw (A-MPDU subframes).
func (b *htBSS) qosFrames() [][]byte {
	var out [][]byte
	for _, f := range b.tap.frames {
		if len(f) > 2 && wlan.FrameControl(uint16(f[0])|uint16(f[1])<<8).IsQoSData() {
			out = append(out, f)
		}
	}
	return out
}
