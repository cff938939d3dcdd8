package medium

import (
	"encoding/binary"
	"errors"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/radio"
)

// SimRadio is a radio.Radio on the medium: a simulated 802.11 chip. It
// contends for the air with EDCA (AIFS plus a random backoff counted in
// slots, frozen while the medium is busy), transmits PPDUs that take
// their airtime per ath/airtime, walks the request's retry schedule,
// answers unicast frames addressed to it with an ACK (a single MPDU) or
// a compressed BlockAck (an A-MPDU), sends its beacon at TBTT with the
// timestamp from its TSF, and has a software key cache doing CCMP as a
// chip's would.
//
// All of its state lives under the medium's lock; the Receiver and the
// requests' Done run from the goroutine calling Medium.Run, without the
// lock held, so both may call Transmit.
type SimRadio struct {
	m    *Medium
	id   int
	idx  int    // index in Medium.sims (bit in the per-radio masks)
	deaf uint64 // bit per SimRadio index: cannot hear it (hidden node)
	addr wlan.MAC
	ch   radio.Channel
	rx   radio.Receiver
	on   bool // started and not stopped

	queues [numAC]reqQueue
	// The exchange in progress: cur is the head request being tried.
	cur         *radio.TxRequest
	curAC       int
	series      int
	triesIn     int
	longTries   int
	rcvd        uint64 // the peer's scoreboard for this exchange
	waitXID     uint64
	airFrames   [][]byte
	airBufs     [][]byte
	waitUntil   int64 // waiting for ACK/BlockAck/CTS until then (µs), 0 none
	shortTries  int
	rtsWait     bool   // the RTS is out, waiting for the CTS
	pendingData *onAir // the PPDU to send after the CTS
	navUntil    int64  // virtual carrier sense (NAV), µs

	// Contention.
	cw      int
	bo      int   // backoff slots left, -1 none drawn
	readyAt int64 // when the head of the queue became ready
	idleAt  int64 // when the medium became idle as this radio senses it
	idle    bool

	// Beaconing.
	beacon    []byte
	beaconTU  uint16
	nextTBTT  int64 // medium µs, -1 none
	beaconDue bool
	tsfOffset int64

	keys   keyCache
	stats  RadioStats
	rxBuf  []byte
	decBuf []byte
}

// RadioStats counts what a SimRadio did.
type RadioStats struct {
	TxPPDUs         uint64 // data/management PPDUs sent (every attempt)
	TxRetries       uint64 // attempts after the first
	TxAcked         uint64 // requests acknowledged
	TxFailed        uint64 // requests that used up their schedule
	Beacons         uint64
	RxFrames        uint64 // MPDUs handed to the Receiver
	RxFCSErrors     uint64 // MPDUs lost on the link (bad FCS)
	RxCollided      uint64 // PPDUs lost to an overlapping transmission
	RxDecrypted     uint64
	RxDecryptErrors uint64
	AcksSent        uint64
	BlockAcks       uint64
	CTSSent         uint64
}

const (
	numAC = 4
	// queueLen is the depth of each access category's queue.
	queueLen = 256
	// maxRadios bounds the SimRadios of one medium (per-radio bitmasks).
	maxRadios = 64
	// beaconRateKbps is the rate beacons go out at (the lowest OFDM
	// rate, mandatory in both bands).
	beaconRateKbps = 6000
	// tu is one time unit in µs (802.11-2016 3.2).
	tu = 1024
)

// edca holds the default EDCA parameter set per radio.TxRequest.Queue
// (802.11-2016 Table 9-137, dot11OCBActivated false): AIFSN, CWmin,
// CWmax, for AC_BE, AC_BK, AC_VI, AC_VO.
var edca = [numAC]struct{ aifsn, cwMin, cwMax int }{
	{3, 15, 1023},
	{7, 15, 1023},
	{2, 7, 15},
	{2, 3, 7},
}

// Errors of Transmit.
var (
	ErrBadRequest = errors.New("medium: malformed transmit request")
	ErrTooMany    = errors.New("medium: too many simulated radios")
)

// reqQueue is a fixed ring of requests.
type reqQueue struct {
	buf        [queueLen]*radio.TxRequest
	head, size int
}

func (q *reqQueue) push(r *radio.TxRequest) bool {
	if q.size == queueLen {
		return false
	}
	q.buf[(q.head+q.size)%queueLen] = r
	q.size++
	return true
}

func (q *reqQueue) pop() *radio.TxRequest {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % queueLen
	q.size--
	return r
}

// RadioConfig sets up a SimRadio.
type RadioConfig struct {
	Addr    wlan.MAC
	Channel radio.Channel
	// TSFOffset is the radio's TSF when the medium's clock started (µs).
	TSFOffset uint64
}

// NewRadio attaches a simulated radio.
func (m *Medium) NewRadio(cfg RadioConfig) (*SimRadio, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sims) >= maxRadios {
		return nil, ErrTooMany
	}
	if cfg.Channel.Number == 0 {
		cfg.Channel = radio.Channel{Number: 36, Band5G: true}
	}
	r := &SimRadio{
		m: m, id: m.nextID, idx: len(m.sims), addr: cfg.Addr, ch: cfg.Channel,
		bo: -1, nextTBTT: -1, idle: true, idleAt: m.us,
		tsfOffset: int64(cfg.TSFOffset),
	}
	r.cw = edca[0].cwMin
	m.nextID++
	m.sims = append(m.sims, r)
	return r, nil
}

// endpointID implements Endpoint.
func (r *SimRadio) endpointID() int { return r.id }

// Address implements radio.Radio.
func (r *SimRadio) Address() [6]byte { return r.addr }

// Start implements radio.Radio.
func (r *SimRadio) Start(rx radio.Receiver) error {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.rx = rx
	r.on = true
	return nil
}

// Stop implements radio.Radio: queued requests complete with
// radio.ErrStopped, reception stops, beaconing stops.
func (r *SimRadio) Stop() {
	m := r.m
	m.mu.Lock()
	r.on = false
	r.rx = nil
	r.beacon = nil
	r.nextTBTT = -1
	r.beaconDue = false
	if r.cur != nil {
		m.complete(r, r.cur, radio.TxStatus{Err: radio.ErrStopped})
		r.endExchange()
	}
	for ac := range r.queues {
		for r.queues[ac].size > 0 {
			m.complete(r, r.queues[ac].pop(), radio.TxStatus{Err: radio.ErrStopped})
		}
	}
	m.mu.Unlock()
	m.runOutbox()
}

// Transmit implements radio.Radio.
func (r *SimRadio) Transmit(req *radio.TxRequest) error {
	if req == nil || len(req.MPDUs) == 0 || len(req.MPDUs) > agg.MaxSubframes || req.Queue >= numAC {
		return ErrBadRequest
	}
	if req.Series[0].Tries == 0 {
		return ErrBadRequest
	}
	for _, se := range req.Series {
		if se.Tries > 0 && r.m.phy.TxTime(se.Rate, 1) == 0 {
			return ErrBadRequest
		}
	}
	for _, f := range req.MPDUs {
		if len(f) > MaxFrame {
			return ErrTooLong
		}
		if len(f) < wlan.ShortCtrlHeaderLen {
			return ErrBadRequest
		}
	}
	if req.Key != radio.NoKey && (req.Key < 0 || req.Key >= KeySlots) {
		return radio.ErrNoSlot
	}
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if !r.on {
		return radio.ErrStopped
	}
	if !r.ch.Width40 {
		for _, se := range req.Series {
			if se.Tries > 0 && se.Rate.HT40 {
				return ErrBadRequest // a 40 MHz rate on a 20 MHz channel
			}
		}
	}
	idle := !r.hasWork()
	if !r.queues[req.Queue].push(req) {
		return radio.ErrQueueFull
	}
	if idle {
		r.readyAt = m.us
		if r.bo < 0 {
			m.drawBackoff(r)
		}
	}
	return nil
}

// SetChannel implements radio.Radio.
func (r *SimRadio) SetChannel(ch radio.Channel) error {
	if ch.Number == 0 {
		return ErrBadRequest
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.ch = ch
	return nil
}

// SetBeacon implements radio.Radio.
func (r *SimRadio) SetBeacon(frame []byte, intervalTU uint16) error {
	if intervalTU != 0 && len(frame) < wlan.TimestampOffset+8 {
		return ErrBadRequest
	}
	if len(frame) > MaxFrame {
		return ErrTooLong
	}
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if intervalTU == 0 {
		r.beacon = r.beacon[:0]
		r.nextTBTT = -1
		r.beaconDue = false
		return nil
	}
	r.beacon = append(r.beacon[:0], frame...)
	if intervalTU != r.beaconTU || r.nextTBTT < 0 {
		// TBTTs are the TSF's multiples of the interval (802.11-2016
		// 11.1.3.2).
		iv := int64(intervalTU) * tu
		tsf := m.us + r.tsfOffset
		r.nextTBTT = (tsf/iv+1)*iv - r.tsfOffset
		r.beaconTU = intervalTU
	}
	return nil
}

// TSF implements radio.Radio.
func (r *SimRadio) TSF() uint64 {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return uint64(r.m.us + r.tsfOffset)
}

// KeyCache implements radio.Radio.
func (r *SimRadio) KeyCache() radio.KeyCache { return simKeyCache{r} }

// Stats returns the radio's counters.
func (r *SimRadio) Stats() RadioStats {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.stats
}

// hasWork reports whether the radio wants the air.
func (r *SimRadio) hasWork() bool {
	if r.beaconDue || r.cur != nil {
		return true
	}
	for ac := range r.queues {
		if r.queues[ac].size > 0 {
			return true
		}
	}
	return false
}

// nextAC is the access category of the exchange to contend for:
// the current one, else the highest-priority non-empty queue.
func (r *SimRadio) nextAC() int {
	if r.cur != nil {
		return r.curAC
	}
	for _, ac := range [numAC]int{3, 2, 0, 1} {
		if r.queues[ac].size > 0 {
			return ac
		}
	}
	return 0
}

// aifs is the AIFS of the radio's next transmission in µs; beacons use
// PIFS (SIFS + one slot, 802.11-2016 10.3.2.3.4 "beacon ... after PIFS").
func (r *SimRadio) aifs() int64 {
	p := &r.m.phy
	if r.beaconDue {
		return int64(p.SIFS + p.Slot)
	}
	return int64(p.SIFS + edca[r.nextAC()].aifsn*p.Slot)
}

// startAt returns when the radio will start transmitting if the medium
// stays idle, or -1.
func (r *SimRadio) startAt() int64 {
	if !r.on || !r.idle || r.waitUntil != 0 || !r.hasWork() {
		return -1
	}
	base := r.idleAt
	if r.readyAt > base {
		base = r.readyAt
	}
	bo := r.bo
	if r.beaconDue || bo < 0 {
		bo = 0
	}
	return base + r.aifs() + int64(bo)*int64(r.m.phy.Slot)
}

// endExchange forgets the current request and prepares the next one.
func (r *SimRadio) endExchange() {
	r.cur = nil
	r.series, r.triesIn, r.longTries = 0, 0, 0
	r.rcvd = 0
	for i := range r.airFrames {
		r.airFrames[i] = nil
	}
	r.airFrames = r.airFrames[:0]
	r.waitUntil = 0
	r.waitXID = 0
	r.shortTries = 0
	r.rtsWait = false
	if r.pendingData != nil {
		r.m.putAir(r.pendingData)
		r.pendingData = nil
	}
}

// seqOf returns the sequence number of an MPDU.
func seqOf(mpdu []byte) uint16 {
	if len(mpdu) < wlan.DataHeaderLen {
		return 0
	}
	return binary.LittleEndian.Uint16(mpdu[22:]) >> 4
}

// tidOf returns the TID of a QoS data MPDU, 0 otherwise.
func tidOf(mpdu []byte) uint8 {
	fc := wlan.FrameControl(binary.LittleEndian.Uint16(mpdu))
	if !fc.IsQoSData() {
		return 0
	}
	hl := wlan.HeaderLen(fc)
	if fc.Order() {
		hl -= 4
	}
	if hl < 2 || len(mpdu) < hl {
		return 0
	}
	return mpdu[hl-2] & 0x0f
}

// rateOf returns the request's rate at schedule entry i.
func rateOf(req *radio.TxRequest, i int) airtime.Rate { return req.Series[i].Rate }
