package wlantest_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// The AP and stations over wlan/medium's SimRadio on lossy links: every
// frame takes its airtime, unicast frames are acknowledged and retried
// along the schedule, so the handshakes and the data get through loss
// that would break them without retries. One station runs CCMP in its
// key cache, the other in software; the AP in its key cache. Every
// frame is compared byte for byte.
// lossP is each link's MPDU loss (ACKs and BlockAcks included).
const lossP = 0.25

var (
	simBSSID      = wlan.MAC{0x02, 0x67, 0x77, 0xa1, 0x01, 0}
	simSSID       = "gowrt-sim"
	simPassphrase = "sim radio passphrase"
)

func TestOverSimRadioWithLoss(t *testing.T) {
	m, err := medium.New(medium.Config{Start: time.Unix(1_800_000_000, 0), Seed: 3, PHY: airtime.TwoGHz(true)})
	if err != nil {
		t.Fatal(err)
	}
	ch := radio.Channel{Number: 1}
	var toDS [][]byte
	a, err := ap.New(ap.Config{BSSID: simBSSID, SSID: simSSID, Passphrase: simPassphrase, Channel: 1, Crypto: ap.CryptoHardware,
		ToDS: func(e []byte) { toDS = append(toDS, append([]byte(nil), e...)) }})
	if err != nil {
		t.Fatal(err)
	}
	ar, err := m.NewRadio(medium.RadioConfig{Addr: simBSSID, Channel: ch})
	if err != nil {
		t.Fatal(err)
	}
	m.Attach(wlantest.TickOnly{T: a})
	if err := a.Start(ar, m.Now()); err != nil {
		t.Fatal(err)
	}
	var stas []*sta.Station
	var radios []*medium.SimRadio
	rx := make([][][]byte, 2)
	for i := 0; i < 2; i++ {
		addr := wlan.MAC{0x02, 0x67, 0x77, 0xa1, 0, byte(i)}
		s, err := sta.New(sta.Config{Addr: addr, SSID: simSSID, Passphrase: simPassphrase, HardwareCrypto: i == 0,
			Receive: func(e []byte) { rx[i] = append(rx[i], append([]byte(nil), e...)) }})
		if err != nil {
			t.Fatal(err)
		}
		r, err := m.NewRadio(medium.RadioConfig{Addr: addr, Channel: ch})
		if err != nil {
			t.Fatal(err)
		}
		m.SetLoss(ar, r, lossP)
		m.SetLoss(r, ar, lossP)
		m.Attach(wlantest.TickOnly{T: s})
		if err := s.Start(r, m.Now()); err != nil {
			t.Fatal(err)
		}
		stas, radios = append(stas, s), append(radios, r)
	}
	m.Run(5 * time.Second)
	for i, s := range stas {
		if s.State() != sta.Authorized {
			t.Fatalf("station %d %v after 5 s at 25%% loss", i, s.State())
		}
	}
	ds := wlan.MAC{0x02, 0xd5, 0, 0, 0, 1}
	var sent0, sent1 [][]byte
	for n := 0; n < 20; n++ {
		up := frame(ds, wlan.MAC(radios[n%2].Address()), n)
		if err := stas[n%2].Send(up); err != nil {
			t.Fatal(err)
		}
		down := frame(wlan.MAC(radios[n%2].Address()), ds, n)
		if err := a.SendFromDS(down); err != nil {
			t.Fatal(err)
		}
		if n%2 == 0 {
			sent0 = append(sent0, down)
		} else {
			sent1 = append(sent1, down)
		}
		m.Run(20 * time.Millisecond)
	}
	m.Run(100 * time.Millisecond)
	if len(toDS) != 20 {
		t.Errorf("%d frames reached the DS, want 20 (retries cover the loss)", len(toDS))
	}
	for i, want := range [][][]byte{sent0, sent1} {
		if len(rx[i]) != len(want) {
			t.Errorf("station %d received %d frames, want %d", i, len(rx[i]), len(want))
			continue
		}
		for k := range want {
			if !bytes.Equal(rx[i][k], want[k]) {
				t.Errorf("station %d frame %d differs", i, k)
			}
		}
	}
	st := ar.Stats()
	if st.TxRetries == 0 || st.RxDecrypted == 0 {
		t.Errorf("AP radio: %+v; want retries and key-cache decryption", st)
	}
	if s0 := radios[0].Stats(); s0.RxDecrypted == 0 {
		t.Errorf("station 0's key cache decrypted nothing: %+v", s0)
	}
	if s1 := radios[1].Stats(); s1.RxDecrypted != 0 {
		t.Errorf("station 1 runs CCMP in software, its radio decrypted %d", s1.RxDecrypted)
	}
	dups := a.Stats.Duplicates.Load() + stas[0].Stats.Duplicates.Load() + stas[1].Stats.Duplicates.Load()
	if dups == 0 {
		t.Error("no duplicates caught: with ACKs lost some frames must arrive twice")
	}
	if a.Stats.EAPOLMICFails.Load() != 0 || a.Stats.HandshakeFails.Load() != 0 {
		t.Errorf("handshakes: %d MIC failures, %d failures with the right passphrase", a.Stats.EAPOLMICFails.Load(), a.Stats.HandshakeFails.Load())
	}
	if a.Stats.Replays.Load() != 0 || a.Stats.CCMPErrors.Load() != 0 {
		t.Errorf("AP: %d replays, %d CCMP errors (retransmissions must be caught as duplicates, not replays)",
			a.Stats.Replays.Load(), a.Stats.CCMPErrors.Load())
	}
}

// frame is an Ethernet frame da ← sa carrying an IPv4-ish payload
// numbered n.
func frame(da, sa wlan.MAC, n int) []byte {
	e := append(append([]byte{}, da[:]...), sa[:]...)
	e = binary.BigEndian.AppendUint16(e, 0x0800)
	return append(e, bytes.Repeat([]byte{byte(n)}, 64)...)
}
