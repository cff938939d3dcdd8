package chansim

import (
	"fmt"
	"math"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
)

// Channel is a scenario's channel on its own, for a simulator other than
// Link (the wlan/medium radio medium): the faded, interfered SNR of a
// transmission over time, and the error model at that SNR. It is the
// same model Link runs; it holds no random state.
type Channel struct {
	sc Scenario
	p  Params
	ch *channel
}

// NewChannel precomputes the channel of sc.
func NewChannel(sc Scenario, p Params) (*Channel, error) {
	if sc.Duration <= 0 || len(sc.Profile) == 0 {
		return nil, fmt.Errorf("chansim: scenario %q incomplete", sc.Name)
	}
	if sc.Burst > 0 && sc.Period <= sc.Burst {
		return nil, fmt.Errorf("chansim: scenario %q: burst %v not shorter than period %v", sc.Name, sc.Burst, sc.Period)
	}
	c := &Channel{sc: sc, p: p}
	c.ch = newChannel(&c.sc, p)
	return c, nil
}

// SNR returns the effective per-stream SNR (dB) of a transmission at r
// at time t (the scenario repeats after its Duration), decoded age after
// the PPDU's preamble (channel ageing), in the interference of a burst
// if [t, t+age] overlaps one.
func (c *Channel) SNR(r airtime.Rate, t, age time.Duration) float64 {
	t %= c.sc.Duration
	us := int64(t / time.Microsecond)
	ageUs := int64(age / time.Microsecond)
	return c.ch.sinrDB(r.Streams(), r.HT40, us+ageUs, ageUs, c.ch.interfered(us, us+ageUs+1))
}

// Success returns the probability that an n-byte MPDU at r is received
// at per-stream SNR snr (the logistic PER of the package doc).
func (c *Channel) Success(r airtime.Rate, snr float64, n int) float64 {
	p1 := 1 / (1 + math.Exp(c.p.Slope*(snr-c.p.SNR50[rateM(r)])))
	return math.Pow(1-p1, float64(n)/1000)
}
