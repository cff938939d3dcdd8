package ap_test

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/sta"
)

// The HT data paths allocate nothing per frame, both ways at once, with
// the whole system in the loop: SendFromDS into the scheduler, A-MPDUs
// over the medium, the station's reordering, decryption and A-MSDU
// unpacking; the station's uplink into its scheduler, the AP's
// reordering, decryption and delivery to the DS.
func TestHTDataPathAllocs(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  ap.Config
		scfg sta.Config
	}{
		{"ccmp-sw", ap.Config{}, sta.Config{}},
		{"ccmp-hw", ap.Config{Crypto: ap.CryptoHardware}, sta.Config{HardwareCrypto: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newHTBSS(t, c.cfg, c.scfg)
			b.m.Detach(b.tapPort) // the test's own copies of the air
			down := ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1)
			up := ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)
			round := func() {
				for i := 0; i < 20; i++ {
					_ = b.ap.SendFromDS(down)
					_ = b.sta.Send(up)
				}
				b.m.Run(time.Millisecond)
			}
			for i := 0; i < 200; i++ {
				round() // rate control and buffers settle
			}
			rx, toDS := b.rx, b.toDS
			if a := testing.AllocsPerRun(100, round); a != 0 {
				t.Errorf("%v allocations per round of 40 frames", a)
			}
			if b.rx-rx < 1000 || b.toDS-toDS < 1000 {
				t.Errorf("%d frames to the station, %d to the DS in 101 rounds", b.rx-rx, b.toDS-toDS)
			}
		})
	}
}

// BenchmarkHTDownlink is the CPU cost of one 1500-byte frame from the DS
// to an HT station with software CCMP, end to end (AP, scheduler,
// medium, station), per frame.
func BenchmarkHTDownlink(b *testing.B) {
	h := newHTBSS(b, ap.Config{}, sta.Config{})
	h.m.Detach(h.tapPort)
	eth := make([]byte, 14+1500)
	copy(eth, ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1))
	rx := h.rx
	b.SetBytes(1500)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = h.ap.SendFromDS(eth)
		if i%20 == 19 {
			h.m.Run(time.Millisecond)
		}
	}
	h.m.Run(10 * time.Millisecond)
	b.ReportMetric(float64(h.rx-rx)/float64(b.N), "delivered/op")
}
