package chansim

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
)

// Channel is the model Link runs: the same SNR at the same instant, the
// documented 40 MHz and per-stream penalties, and the logistic error
// curve anchored at SNR50.
func TestChannelExport(t *testing.T) {
	p := DefaultParams()
	sc := Scenarios(0.1, 3)[0]
	c, err := NewChannel(sc, p)
	if err != nil {
		t.Fatal(err)
	}
	ch := newChannel(&sc, p)
	mcs0 := airtime.MCS(0, false, false)
	for _, at := range []time.Duration{0, 123 * time.Millisecond, sc.Duration - time.Millisecond} {
		us := int64(at / time.Microsecond)
		if got, want := c.SNR(mcs0, at, 0), ch.sinrDB(1, false, us, 0, false); got != want {
			t.Errorf("at %v: SNR %.3f, link model %.3f", at, got, want)
		}
		if d := c.SNR(mcs0, at, 0) - c.SNR(airtime.MCS(0, true, false), at, 0); d < 3 || d > 3.02 {
			t.Errorf("40 MHz penalty %.3f dB", d)
		}
	}
	// The scenario repeats after its duration.
	if c.SNR(mcs0, sc.Duration+time.Millisecond, 0) != c.SNR(mcs0, time.Millisecond, 0) {
		t.Error("no wrap")
	}
	// PER1000 is 1/2 at SNR50 for a 1000-byte MPDU; longer is worse.
	for m := 0; m < 8; m++ {
		r := airtime.MCS(uint8(m), false, false)
		if s := c.Success(r, p.SNR50[m], 1000); s < 0.4999 || s > 0.5001 {
			t.Errorf("MCS %d at SNR50: %.4f", m, s)
		}
		if c.Success(r, p.SNR50[m], 4000) >= c.Success(r, p.SNR50[m], 1000) || c.Success(r, p.SNR50[m]+5, 1000) <= 0.5 {
			t.Errorf("MCS %d: not monotonic", m)
		}
	}
	if _, err := NewChannel(Scenario{Name: "empty"}, p); err == nil {
		t.Error("incomplete scenario accepted")
	}
}
