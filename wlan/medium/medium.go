// Package medium is a simulated 802.11 radio medium for tests and the
// simulator, the role mac80211_hwsim and FreeBSD's wtap play: radios
// attach to it and it carries their frames, on a virtual clock the
// caller advances, so runs are deterministic for a seed.
//
// Two kinds of attachment share the air:
//
//   - SimRadio implements wlan/radio.Radio, the contract of a chip: EDCA
//     contention on a microsecond clock (AIFS and backoff per access
//     category, frozen while the medium is busy, NAV from Duration
//     fields), PPDU airtime per ath/airtime, collisions between
//     overlapping transmissions (with optional hidden nodes), RTS/CTS,
//     ACKs and compressed BlockAcks with the retry schedule walked,
//     per-link SNR and per-subframe errors from ath/chansim channels,
//     beacons at TBTT with the TSF, and a software key cache doing CCMP
//     like a chip's.
//   - Device (Attach) is the older frame-level hook: its frames arrive
//     whole and instantly, with per-link loss only, and it hears every
//     PPDU put on the air by SimRadios.
//
// Every frame put on the air is written to a capture file
// (LINKTYPE_IEEE802_11_RADIOTAP) with a radiotap header giving rate or
// MCS, channel and signal, and the A-MPDU status of aggregated frames.
package medium

import (
	"errors"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/chansim"
	"github.com/gowrt/gowrt/internal/pcap"
	"github.com/gowrt/gowrt/wlan/radio"
)

// Device is what sits behind a radio: the medium hands it the frames
// other radios transmit and calls Tick as its clock advances. Both are
// called from Run's goroutine, never with the medium's lock held, so a
// device may transmit from either.
type Device interface {
	// Receive gets one frame (no FCS). The frame is borrowed: valid
	// until Receive returns, shared with the other receivers: the
	// device must neither write to it nor keep it.
	Receive(frame []byte)
	// Tick lets the device run its timers at the medium's time now.
	Tick(now time.Time)
}

// radiotapHeader is the smallest valid radiotap header (radiotap.org,
// "Radiotap header"): version 0, pad 0, length 8 (little-endian), and a
// present bitmap of zero: no fields follow.
var radiotapHeader = [8]byte{0, 0, 8, 0, 0, 0, 0, 0}

// MaxFrame bounds what a radio may transmit: an 802.11 MPDU of at most
// 7991 octets (802.11-2016 Table 9-19 for VHT) rounded up.
const MaxFrame = 8192

// maxDeliveriesPerRun stops a pair of devices that keep answering each
// other from spinning Run forever.
const maxDeliveriesPerRun = 1 << 20

// ErrTooLong is returned for a frame longer than MaxFrame.
var ErrTooLong = errors.New("medium: frame too long")

// Config sets up a medium.
type Config struct {
	// Start is the virtual clock's initial time.
	Start time.Time
	// Seed seeds the loss generator.
	Seed uint64
	// Capture, if set, receives a pcap file of every frame transmitted.
	Capture io.Writer
	// Step is the clock resolution of Run for Devices' ticks and
	// deliveries; zero means 1 ms. SimRadios run on microseconds.
	Step time.Duration
	// PHY is the timing of the band; zero means 5 GHz (ath/airtime).
	PHY airtime.PHY
}

// Medium connects radios. Transmit is safe for concurrent use; Run must
// be called from one goroutine.
type Medium struct {
	mu      sync.Mutex
	start   time.Time
	us      int64 // µs since start
	step    time.Duration
	phy     airtime.PHY
	nextID  int
	rng     *rand.Rand
	radios  []*Radio
	loss    map[[2]int]float64
	models  map[[2]int]*chansim.Channel
	pending []inFlight
	capture *pcap.Writer
	capErr  error
	capBuf  []byte
	stats   Stats

	tickers []Ticker
	ticking []Ticker

	// The SimRadios' air (air.go).
	sims     []*SimRadio
	active   []*onAir
	resps    []pendingResp
	starting []*SimRadio
	xid      uint64
	outbox   []delivery
	spare    []delivery
	draining bool
	airPool  []*onAir
	bufPool  [][]byte
}

type inFlight struct {
	from  *Radio
	frame []byte
}

// Stats counts what went over the air.
type Stats struct {
	Transmitted uint64
	Delivered   uint64
	Lost        uint64
	// BadResponses counts BlockAcks that did not parse.
	BadResponses uint64
}

// Radio is one device's attachment to the medium.
type Radio struct {
	m   *Medium
	id  int
	dev Device
}

// New makes a medium.
func New(cfg Config) (*Medium, error) {
	m := &Medium{
		start:  cfg.Start,
		step:   cfg.Step,
		phy:    cfg.PHY,
		rng:    rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		loss:   make(map[[2]int]float64),
		models: make(map[[2]int]*chansim.Channel),
	}
	if m.step < time.Microsecond {
		m.step = time.Millisecond
	}
	if m.phy.Slot == 0 {
		m.phy = airtime.FiveGHz()
	}
	if cfg.Capture != nil {
		w, err := pcap.NewWriter(cfg.Capture, pcap.LinkTypeIEEE80211Radio, len(radiotapHeader)+MaxFrame)
		if err != nil {
			return nil, err
		}
		m.capture = w
	}
	return m, nil
}

// Attach connects dev and returns its radio.
func (m *Medium) Attach(dev Device) *Radio {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := &Radio{m: m, id: m.nextID, dev: dev}
	m.nextID++
	m.radios = append(m.radios, r)
	return r
}

// Detach disconnects r: it no longer receives, and what it sends is lost.
func (m *Medium) Detach(r *Radio) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.radios {
		if x == r {
			m.radios = append(m.radios[:i], m.radios[i+1:]...)
			break
		}
	}
	r.m = nil
}

// SetLoss makes frames from one radio to another get lost with
// probability p (0..1), each MPDU on its own.
func (m *Medium) SetLoss(from, to Endpoint, p float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loss[[2]int{from.endpointID(), to.endpointID()}] = p
}

// endpointID implements Endpoint.
func (r *Radio) endpointID() int { return r.id }

// Now returns the medium's clock.
func (m *Medium) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.timeAt(m.us)
}

// Stats returns the counters.
func (m *Medium) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

// CaptureErr returns the first error writing the capture, if any.
func (m *Medium) CaptureErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.capErr
}

// Transmit puts a copy of frame (no FCS) on the air; it reaches the
// other radios at the next delivery.
func (r *Radio) Transmit(frame []byte) error {
	m := r.m
	if m == nil {
		return nil
	}
	if len(frame) > MaxFrame {
		return ErrTooLong
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, inFlight{from: r, frame: append([]byte(nil), frame...)})
	m.stats.Transmitted++
	if m.capture != nil && m.capErr == nil {
		m.capBuf = append(append(m.capBuf[:0], radiotapHeader[:]...), frame...)
		m.capErr = m.capture.WritePacket(m.timeAt(m.us), m.capBuf)
	}
	return nil
}

// Inject puts a frame on the air as if an unattached transmitter sent
// it: every radio receives it. Tests use it to replay or forge frames.
func (m *Medium) Inject(frame []byte) error {
	ghost := &Radio{m: m, id: -1}
	return ghost.Transmit(frame)
}

// Deliver hands every frame in flight to its receivers, including the
// frames sent while doing so, until none is left.
func (m *Medium) Deliver() {
	for n := 0; n < maxDeliveriesPerRun; n++ {
		m.mu.Lock()
		if len(m.pending) == 0 {
			m.mu.Unlock()
			return
		}
		f := m.pending[0]
		m.pending[0] = inFlight{}
		m.pending = m.pending[1:]
		var to []*Radio
		for _, r := range m.radios {
			if r == f.from {
				continue
			}
			if p := m.loss[[2]int{f.from.id, r.id}]; p > 0 && m.rng.Float64() < p {
				m.stats.Lost++
				continue
			}
			m.stats.Delivered++
			to = append(to, r)
		}
		for _, r := range m.sims {
			if !r.on || r.rx == nil {
				continue
			}
			if p := m.loss[[2]int{f.from.id, r.id}]; p > 0 && m.rng.Float64() < p {
				m.stats.Lost++
				continue
			}
			m.stats.Delivered++
			r.stats.RxFrames++
			d := delivery{rcv: r.rx}
			d.rst = radio.RxStatus{Time: m.timeAt(m.us), Rate: airtime.Legacy(beaconRateKbps),
				RSSI: defaultSNR, Channel: r.ch.Number}
			d.buf = m.rxInto(r, m.getBuf(), f.frame, &d.rst)
			m.outbox = append(m.outbox, d)
		}
		m.mu.Unlock()
		for _, r := range to {
			r.dev.Receive(f.frame)
		}
		m.runOutbox()
	}
}

// Run advances the clock by d: the SimRadios' air event by event, and
// in steps of Config.Step the Devices' ticks and deliveries. Callbacks
// (Device methods, Receivers, Done) run on the caller's goroutine; none
// may call Run.
func (m *Medium) Run(d time.Duration) {
	m.mu.Lock()
	end := m.us + int64(d/time.Microsecond)
	step := int64(m.step / time.Microsecond)
	m.mu.Unlock()
	for {
		m.Deliver()
		m.mu.Lock()
		if m.us >= end {
			m.mu.Unlock()
			return
		}
		to := m.us + step
		if to > end {
			to = end
		}
		m.mu.Unlock()
		m.advance(to)
		m.Deliver()
		m.mu.Lock()
		now := m.timeAt(m.us)
		ticks := m.ticking[:0]
		for _, r := range m.radios {
			ticks = append(ticks, r.dev)
		}
		ticks = append(ticks, m.tickers...)
		m.ticking = nil
		m.mu.Unlock()
		for _, t := range ticks {
			t.Tick(now)
		}
		m.mu.Lock()
		m.ticking = ticks[:0]
		m.mu.Unlock()
	}
}

// Ticker is anything with timers to run on the medium's clock: the MAC
// layer above a SimRadio (an AP's beacon TIM updates, inactivity and
// handshake timeouts).
type Ticker interface {
	Tick(now time.Time)
}

// AddTicker has t ticked at every step of Run (Config.Step), after the
// air and the deliveries up to that time, like a Device.
func (m *Medium) AddTicker(t Ticker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tickers = append(m.tickers, t)
}
