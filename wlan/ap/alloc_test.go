package ap_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/sta"
)

// protectedFromStation returns n CCMP data frames station 0 sent, in
// order, after taking the AP off the air so that it has not seen them.
func protectedFromStation(t testing.TB, b *bss, n int) [][]byte {
	b.m.Detach(b.apRadio.Port()) // the AP's transmissions are now discarded
	b.tap.frames = nil
	eth := ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)
	for i := 0; i < n; i++ {
		if err := b.stas[0].Send(eth); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			b.m.Deliver() // Deliver stops after a million frames
		}
	}
	b.m.Deliver()
	var out [][]byte
	for _, f := range b.tap.frames {
		if fr, err := wlan.Parse(f); err == nil && fr.FC.Protected() && fr.FC.ToDS() {
			out = append(out, f)
		}
	}
	if len(out) != n {
		t.Fatalf("%d frames captured, want %d", len(out), n)
	}
	return out
}

// The per-frame paths allocate nothing: a CCMP frame from a station
// decrypted and handed to the DS, and a frame from the DS encrypted and
// transmitted.
func TestDataPathAllocs(t *testing.T) {
	b := newBSS(t, ap.Config{}, testPassphrase)
	b.m.Run(time.Second)
	frames := protectedFromStation(t, b, 102)
	b.discardDS = true
	before := b.ap.Stats.RxData.Load()
	i := 0
	if a := testing.AllocsPerRun(100, func() {
		b.ap.Receive(frames[i], nil)
		i++
	}); a != 0 {
		t.Errorf("receive path: %v allocations per frame", a)
	}
	if got := b.ap.Stats.RxData.Load() - before; got != 101 {
		t.Errorf("%d frames reached the DS, want 101", got)
	}
	eth := ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1)
	if a := testing.AllocsPerRun(100, func() {
		if err := b.ap.SendFromDS(eth); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("transmit path: %v allocations per frame", a)
	}
}

func BenchmarkReceiveCCMP(b *testing.B) {
	s := newBSS(b, ap.Config{}, testPassphrase)
	s.m.Run(time.Second)
	frames := protectedFromStation(b, s, b.N)
	s.discardDS = true
	b.ReportAllocs()
	b.SetBytes(int64(len(frames[0])))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.ap.Receive(frames[i], nil)
	}
}

func BenchmarkSendFromDS(b *testing.B) {
	s := newBSS(b, ap.Config{}, testPassphrase)
	s.m.Run(time.Second)
	s.m.Detach(s.apRadio.Port())
	eth := ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(eth)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.ap.SendFromDS(eth); err != nil {
			b.Fatal(err)
		}
	}
}

// The per-frame paths allocate nothing with crypto in the key cache
// either, and for a 4-address station: a frame the radio decrypted,
// checked against the replay counters and handed to the DS, and a frame
// from the DS to a host behind the station, sent for the radio to
// encrypt.
func TestDataPathAllocsHardwareWDS(t *testing.T) {
	b := newBSS(t, ap.Config{Crypto: ap.CryptoHardware, WDS: true})
	b.addStationConfig(t, 0, sta.Config{Passphrase: testPassphrase, WDS: true})
	b.m.Run(time.Second)
	b.m.Detach(b.apRadio.Port())
	b.tap.frames = nil
	eth := ethICMP(dsAddr, behind, 50, 1, 8, 1)
	for i := 0; i < 102; i++ {
		if err := b.stas[0].Send(eth); err != nil {
			t.Fatal(err)
		}
	}
	b.m.Deliver()
	var frames [][]byte
	for _, f := range b.tap.frames {
		if fr, err := wlan.Parse(f); err == nil && fr.FC.Protected() && fr.FC.ToDS() && fr.FC.FromDS() {
			frames = append(frames, f)
		}
	}
	if len(frames) != 102 {
		t.Fatalf("%d frames captured", len(frames))
	}
	b.discardDS = true
	before, dec := b.ap.Stats.RxData.Load(), b.apRadio.Decrypted
	i := 0
	if a := testing.AllocsPerRun(100, func() {
		b.apRadio.Receive(frames[i]) // the key cache decrypts, the AP checks the PN
		i++
	}); a != 0 {
		t.Errorf("receive path: %v allocations per frame", a)
	}
	if got := b.ap.Stats.RxData.Load() - before; got != 101 || b.apRadio.Decrypted-dec != 101 {
		t.Errorf("%d frames reached the DS, %d decrypted by the radio; want 101", got, b.apRadio.Decrypted-dec)
	}
	back := ethICMP(behind, dsAddr, 1, 50, 0, 1)
	if a := testing.AllocsPerRun(100, func() {
		if err := b.ap.SendFromDS(back); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("transmit path: %v allocations per frame", a)
	}
}

func BenchmarkReceiveKeyCache(b *testing.B) {
	s := newBSS(b, ap.Config{Crypto: ap.CryptoHardware}, testPassphrase)
	s.m.Run(time.Second)
	frames := protectedFromStation(b, s, b.N)
	s.discardDS = true
	b.ReportAllocs()
	b.SetBytes(int64(len(frames[0])))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.apRadio.Receive(frames[i]) // includes the model's AES
	}
}

func BenchmarkSendFromDSKeyCache(b *testing.B) {
	s := newBSS(b, ap.Config{Crypto: ap.CryptoHardware}, testPassphrase)
	s.m.Run(time.Second)
	s.m.Detach(s.apRadio.Port())
	eth := ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(eth)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.ap.SendFromDS(eth); err != nil {
			b.Fatal(err)
		}
	}
}
