package ap_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan/ap"
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
