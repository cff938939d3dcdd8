package ap_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/sta"
)

// FuzzReceive feeds arbitrary frames to an AP that has an authorized
// station (so the data, EAPOL and CCMP paths are reachable) and must
// never panic. The seeds are every frame of a real association and
// exchange, plus variants of them from that station's address.
func FuzzReceive(f *testing.F) {
	b := newBSS(f, ap.Config{MaxStations: 4}, testPassphrase)
	b.m.Run(time.Second)
	if err := b.stas[0].Send(ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)); err != nil {
		f.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	for _, fr := range b.tap.frames {
		f.Add(fr)
	}
	f.Add(authFrame(staAddr(3), 1))
	f.Add([]byte{0x08, 0x41})
	f.Fuzz(func(t *testing.T, frame []byte) {
		b.ap.Receive(frame, nil)
		// The same bytes as if from the authorized station.
		if len(frame) >= 16 {
			g := append([]byte(nil), frame...)
			sa := staAddr(0)
			copy(g[10:16], sa[:])
			copy(g[4:10], apAddr[:])
			b.ap.Receive(g, nil)
		}
		b.m.Run(time.Millisecond) // timers, answers
		if n := len(b.ap.Stations()); n > 4 {
			t.Fatalf("table holds %d stations", n)
		}
		_ = b.ap.SendFromDS(ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1))
		// Keep memory flat over millions of runs.
		b.capture.Reset()
		b.tap.frames, b.tap.times, b.toDS = b.tap.frames[:0], b.tap.times[:0], b.toDS[:0]
	})
}

// FuzzReceiveModes is FuzzReceive on the new paths: hardware crypto (the
// receive status claims the frame was decrypted, or failed to be),
// 4-address stations and a VLAN on the DS side; the first byte picks the
// status. A 4-address station is authorized; the seeds are its frames.
func FuzzReceiveModes(f *testing.F) {
	b := newBSS(f, ap.Config{MaxStations: 4, Crypto: ap.CryptoHardware, WDS: true, VLAN: 7, MaxBehind: 8})
	b.addStationConfig(f, 0, sta.Config{Passphrase: testPassphrase, WDS: true})
	b.m.Run(time.Second)
	b.discardDS = true
	if err := b.stas[0].Send(ethICMP(dsAddr, behind, 100, 1, 8, 1)); err != nil {
		f.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	for _, fr := range b.tap.frames {
		f.Add(append([]byte{0}, fr...))
		f.Add(append([]byte{1}, fr...))
	}
	f.Add([]byte{2, 0x88, 0x43})
	// The HT paths: an HT AP with an HT station, Block Ack agreements
	// both ways, A-MSDUs in A-MPDUs; the seeds are everything on its air
	// (ADDBA, BAR, QoS data, A-MSDUs), given to the HT AP when the first
	// byte is 4 or more.
	h := newHTBSS(f, ap.Config{MaxStations: 4, Crypto: ap.CryptoHardware}, sta.Config{HardwareCrypto: true})
	for _, fr := range h.tap.frames {
		f.Add(append([]byte{4}, fr...))
		f.Add(append([]byte{5}, fr...))
	}
	sts := []*radio.RxStatus{nil, {Decrypted: true}, {DecryptErr: true}, {}}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		st, frame := sts[int(in[0])%len(sts)], in[1:]
		if in[0] >= 4 {
			h.ap.Receive(frame, st)
			h.m.Run(time.Millisecond)
			_ = h.ap.SendFromDS(ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1))
			h.tap.frames, h.tap.times = h.tap.frames[:0], h.tap.times[:0]
			return
		}
		b.ap.Receive(frame, st)
		if len(frame) >= 16 {
			g := append([]byte(nil), frame...)
			sa := staAddr(0)
			copy(g[10:16], sa[:])
			copy(g[4:10], apAddr[:])
			b.ap.Receive(g, st)
		}
		b.m.Run(time.Millisecond)
		if n := len(b.ap.Stations()); n > 4 {
			t.Fatalf("table holds %d stations", n)
		}
		for _, in := range b.ap.Stations() {
			if in.Behind > 8 {
				t.Fatalf("%d addresses behind a station", in.Behind)
			}
		}
		_ = b.ap.SendFromDS(frame) // arbitrary bytes from the DS, VLAN parsing
		b.capture.Reset()
		b.tap.frames, b.tap.times = b.tap.frames[:0], b.tap.times[:0]
	})
}
