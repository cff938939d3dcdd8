// Package txq is the A-MPDU transmit scheduler between the 802.11 MAC
// layer (an AP or a station) and a radio.Radio: per-peer, per-TID queues
// of QoS data MPDUs, aggregates formed for the rate that rate control
// picks, the BlockAck window, and software retransmission.
//
// What it does per exchange, as FreeBSD's ath_tx_ht / ath9k's xmit.c do
// in their own ways (facts only):
//
//   - rate control per peer is ath/rate/sample: Pick gives the retry
//     schedule and the largest A-MPDU (its size bin, 4 ms at the rate,
//     the peer's maximum); Complete gets the radio's TxStatus;
//   - A-MPDUs go only under a Block Ack agreement (the MAC layer runs
//     wlan/ba and sets the negotiated window with SetBAWindow); without
//     one, frames go one at a time;
//   - the aggregate takes the oldest unacknowledged frames of the TID
//     within the BlockAck window (up to 64 sequence numbers from the
//     oldest outstanding one, 802.11-2016 10.24.7), sized by ath/agg.Form with
//     the peer's MPDU density, and rate.Table.FitSchedule drops retry
//     series that could not carry it within 4 ms;
//   - subframes the BlockAck does not acknowledge stay in the window and
//     go out again in a later aggregate, formed anew at the rate the next
//     Pick gives; after SoftRetries they are dropped, counted, and a
//     BlockAckReq moves the recipient's window past them;
//   - one exchange per peer and TID is in flight at a time, peers are
//     served round-robin, TIDs by access category priority;
//   - with A-MSDU enabled, an MSDU queued behind a frame not yet sent is
//     packed into it as an A-MSDU subframe (802.11-2016 9.3.2.2) when
//     ath/agg's TXOP plan at the peer's current rate keeps the result
//     one MPDU within the A-MSDU and TXOP limits, as mac80211 builds
//     A-MSDUs in its queues while the hardware is busy.
//
// Frames live in buffers allocated when the scheduler is made: enqueueing,
// forming, completing and retrying allocate nothing.
package txq

import (
	"errors"
	"math/bits"
	"sync"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/ath/rate/sample"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
)

const (
	// Window is the BlockAck window (802.11-2016 10.24.7.7: 64 MPDUs).
	Window = wlan.MaxBAWindow
	// ringLen bounds the frames queued per peer and TID (window plus
	// what waits behind it).
	ringLen = 256
	// MaxMSDU is the largest MSDU payload (802.11-2016 9.2.4.7: 2304
	// octets of frame body, less LLC/SNAP).
	MaxMSDU = 2304 - wlan.MSDUHeaderLen
	// bufLen is one frame buffer: QoS header with four addresses and
	// HT control, CCMP header and MIC, LLC/SNAP and the MSDU.
	bufLen = 36 + ccmp.Overhead + 2304
	// DefaultSoftRetries is how often a subframe is sent again before it
	// is dropped (ath9k ATH_MAX_SW_RETRIES is 30, FreeBSD's
	// SWMAX_RETRIES 10).
	DefaultSoftRetries = 10
	// DefaultBuffers is the frame pool size.
	DefaultBuffers = 2048
	// barRateKbps: BlockAckReqs go at the lowest OFDM rate.
	barRateKbps = 6000
	// maxBARTries is how often a BlockAckReq is sent before the scheduler
	// gives up on it and leaves the recipient to its reorder timeout.
	maxBARTries = 8
	// numTIDs: the eight user priorities (802.11-2016 10.2.4.2).
	numTIDs = 8
	// MaxAMSDUSubframes bounds the MSDUs packed into one A-MSDU.
	MaxAMSDUSubframes = 8
	// amsduBit is the A-MSDU Present bit of the QoS Control field
	// (802.11-2016 9.2.4.5.9), in its first octet.
	amsduBit = 0x80
)

// tidAC maps a TID (user priority) to radio.TxRequest.Queue: 0 BE, 1 BK,
// 2 VI, 3 VO (802.11-2016 Table 10-1).
var tidAC = [numTIDs]uint8{0, 1, 1, 0, 2, 2, 3, 3}

// tidOrder is the order TIDs are served in: VO, VI, BE, BK.
var tidOrder = [numTIDs]uint8{7, 6, 5, 4, 3, 0, 2, 1}

// Errors.
var (
	ErrFull     = errors.New("txq: queue full")
	ErrNoBuffer = errors.New("txq: no frame buffer")
	ErrTooLong  = errors.New("txq: MSDU too long")
	ErrTID      = errors.New("txq: TID out of range")
	ErrStation  = errors.New("txq: station removed")
	ErrAddr     = errors.New("txq: DA/SA not expressible without 4-address mode")
	ErrWindow   = errors.New("txq: Block Ack window outside 0..64")
)

// Config sets up a scheduler.
type Config struct {
	Radio radio.Radio
	// Own is our address; AP mode (FromDS frames, Own is the BSSID)
	// unless Station is set (ToDS frames to the AP).
	Own     wlan.MAC
	Station bool
	PHY     airtime.PHY
	// Caps are our rate capabilities.
	Caps rate.Caps
	// Rate tunes rate control (zero: sample's defaults).
	Rate        sample.Config
	SoftRetries int
	Buffers     int
	// AMSDU packs MSDUs into A-MSDUs of at most MaxAMSDU bytes (default
	// agg.MaxAMSDUShort) whose exchange fits TXOPLimitUs at the current
	// rate (default agg.DefaultLimitUs).
	AMSDU       bool
	MaxAMSDU    int
	TXOPLimitUs int
	// Now is the clock rate control runs on.
	Now func() time.Duration
}

// Scheduler is the transmit scheduler of one interface. It is safe for
// concurrent use; the radio must not call Done from inside Transmit.
type Scheduler struct {
	mu       sync.Mutex
	cfg      Config
	free     [][]byte
	stations []*Station
	rr       int
	// Scratch for A-MSDU packing.
	scratch  []byte
	planLens [MaxAMSDUSubframes + 1]int
	planOut  [1]agg.PPDU
}

// frame is one MPDU waiting for its acknowledgement.
type frame struct {
	buf     []byte
	seq     uint16
	retries uint16
	done    bool // acknowledged or dropped
	dropped bool
	sent    bool // in a request at least once: no more packing
	sealed  bool // protected in software already (StationConfig.Seal)
	// A-MSDU packing: the MSDUs (LLC/SNAP and payload lengths), the
	// first one's addresses, where the body starts.
	msdus   uint8
	lens    [MaxAMSDUSubframes]uint16
	da, sa  wlan.MAC
	body    uint16
	payload int
}

// tidQueue is one TID's frames in sequence order: ring[head] is the
// oldest outstanding one, the start of the BlockAck window.
type tidQueue struct {
	st       *Station
	tid      uint8
	nextSeq  uint16
	ring     [ringLen]frame
	head, n  int
	window   int // Block Ack window, 0 without an agreement
	inflight bool
	needBAR  bool
	barTries int
	isBAR    bool
	req      radio.TxRequest
	mpdus    [Window][]byte
	idx      [Window]int // ring positions of the request's frames
	lens     [Window]int
	dec      rate.Decision
	psdu     int
	barBuf   []byte
}

// Station is one peer's queues and rate control.
type Station struct {
	s        *Scheduler
	addr     wlan.MAC
	key      int
	fourAddr bool
	baWindow int
	table    *rate.Table
	node     *sample.Node
	tids     [numTIDs]*tidQueue
	gone     bool
	stats    Stats
	seal     func(mpdu []byte) error
}

// Stats are one peer's counters, for an athstats-style view.
type Stats struct {
	Enqueued    uint64 // MSDUs
	AMSDUPacked uint64 // MSDUs packed into an A-MSDU behind another
	QueueFull   uint64 // MSDUs refused: ring or buffers full
	Acked       uint64 // MPDUs acknowledged
	Retries     uint64 // MPDU retransmissions in software
	Dropped     uint64 // MPDUs dropped after SoftRetries
	BARs        uint64
	BARFailed   uint64 // BlockAckReqs given up on after maxBARTries
	Exchanges   uint64 // PPDUs handed to the radio (aggregate or single)
	Subframes   uint64
	HWRetries   uint64 // radio tries beyond the first
	TxErrors    uint64 // requests the radio dropped unsent
	PayloadAck  uint64 // MSDU payload bytes acknowledged
	// AggHist counts aggregates by subframes: 1, 2-3, 4-7, 8-15, 16-31,
	// 32-63, 64.
	AggHist [7]uint64
	// PerRate counts exchanges ended at each rate index, and their
	// subframes sent and acknowledged.
	PerRate [rate.MaxRates]RateStats
}

// RateStats are the counters of one rate.
type RateStats struct {
	Exchanges, Subframes, Acked uint64
}

// New makes a scheduler and its frame pool.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Radio == nil || cfg.Now == nil {
		return nil, errors.New("txq: radio and clock required")
	}
	if cfg.SoftRetries <= 0 {
		cfg.SoftRetries = DefaultSoftRetries
	}
	if cfg.Buffers <= 0 {
		cfg.Buffers = DefaultBuffers
	}
	if cfg.PHY.Slot == 0 {
		cfg.PHY = airtime.FiveGHz()
	}
	size := bufLen
	if cfg.AMSDU {
		if cfg.MaxAMSDU <= 0 {
			cfg.MaxAMSDU = agg.MaxAMSDUShort
		}
		if cfg.MaxAMSDU > agg.MaxAMSDULong {
			return nil, errors.New("txq: A-MSDU limit above 7935")
		}
		if cfg.TXOPLimitUs <= 0 {
			cfg.TXOPLimitUs = agg.DefaultLimitUs
		}
		if n := 36 + ccmp.Overhead + cfg.MaxAMSDU; n > size {
			size = n
		}
	}
	s := &Scheduler{cfg: cfg, free: make([][]byte, cfg.Buffers), scratch: make([]byte, 0, bufLen)}
	pool := make([]byte, cfg.Buffers*size)
	for i := range s.free {
		s.free[i] = pool[i*size : i*size : (i+1)*size]
	}
	return s, nil
}

// StationConfig describes a peer.
type StationConfig struct {
	Addr wlan.MAC
	// Caps are its rate capabilities (from its rates and HT
	// capabilities).
	Caps rate.Caps
	// Key is the key-cache slot its frames are encrypted with, or
	// radio.NoKey.
	Key int
	// FourAddr: the peer is in 4-address (WDS) mode, bridging a LAN:
	// frames carry DA and SA in Address 3 and 4 (802.11-2016 Table 9-26).
	FourAddr bool
	// BAWindow is every TID's Block Ack window to start with (0: no
	// agreement, no A-MPDU); SetBAWindow changes it per TID as
	// agreements come and go.
	BAWindow int
	// Seal, with Key radio.NoKey, protects the peer's frames in
	// software: each MPDU is built with the Protected bit and zeroed
	// room for the CCMP header and MIC (as for the key cache), and Seal
	// fills them in and encrypts the body in place when the MPDU is
	// first handed to the radio. The PN is thus assigned at dequeue, so
	// PNs rise with sequence numbers within the Block Ack window;
	// retransmissions keep theirs. A frame Seal fails on is dropped.
	Seal func(mpdu []byte) error
}

// AddStation adds a peer.
func (s *Scheduler) AddStation(cfg StationConfig) (*Station, error) {
	t, err := rate.NewTable(s.cfg.PHY, s.cfg.Caps, cfg.Caps)
	if err != nil {
		return nil, err
	}
	n, err := sample.New(t, s.cfg.Rate)
	if err != nil {
		return nil, err
	}
	if cfg.BAWindow < 0 || cfg.BAWindow > Window {
		return nil, ErrWindow
	}
	st := &Station{s: s, addr: cfg.Addr, key: cfg.Key, fourAddr: cfg.FourAddr, baWindow: cfg.BAWindow, table: t, node: n}
	if cfg.Key == radio.NoKey {
		st.seal = cfg.Seal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stations = append(s.stations, st)
	return st, nil
}

// RemoveStation drops a peer's queued frames; exchanges in flight end
// without touching it.
func (s *Scheduler) RemoveStation(st *Station) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.stations {
		if x == st {
			s.stations = append(s.stations[:i], s.stations[i+1:]...)
			break
		}
	}
	st.gone = true
	for _, q := range st.tids {
		if q != nil && !q.inflight {
			s.flush(q)
		}
	}
}

// flush returns all of q's frames to the pool (a TID of a removed
// station once nothing is in flight).
func (s *Scheduler) flush(q *tidQueue) {
	for q.n > 0 {
		f := &q.ring[q.head]
		if f.buf != nil {
			s.free = append(s.free, f.buf[:0])
		}
		*f = frame{}
		q.head = (q.head + 1) % ringLen
		q.n--
	}
}

// Addr returns the station's address.
func (st *Station) Addr() wlan.MAC { return st.addr }

// Table returns the station's rate table.
func (st *Station) Table() *rate.Table { return st.table }

// Stats returns a copy of the station's counters.
func (s *Scheduler) Stats(st *Station) Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return st.stats
}

// Arm returns rate control's statistics of (bin, rix) for the station.
func (s *Scheduler) Arm(st *Station, bin, rix int) sample.ArmStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return st.node.Arm(bin, rix)
}

// Enqueue queues an MSDU (EtherType and payload from sa to da) for st
// on tid, builds its MPDU, and starts an exchange if the TID is idle.
// Without 4-address mode an AP's frames must go to the station itself
// (da == st's address) and a station's must come from itself (sa ==
// Config.Own): ErrAddr otherwise.
func (s *Scheduler) Enqueue(st *Station, tid uint8, da, sa wlan.MAC, etherType uint16, payload []byte) error {
	if tid >= numTIDs {
		return ErrTID
	}
	if len(payload) > MaxMSDU {
		return ErrTooLong
	}
	if !st.fourAddr && ((s.cfg.Station && sa != s.cfg.Own) || (!s.cfg.Station && da != st.addr)) {
		return ErrAddr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.gone {
		return ErrStation
	}
	q := st.tids[tid]
	if q == nil {
		q = s.newTID(st, tid)
	}
	if s.cfg.AMSDU && q.n > 0 {
		if tail := &q.ring[(q.head+q.n-1)%ringLen]; s.fitsAMSDU(st, tail, wlan.MSDUHeaderLen+len(payload)) {
			s.pack(st, tail, da, sa, etherType, payload)
			st.stats.Enqueued++
			st.stats.AMSDUPacked++
			return nil
		}
	}
	if q.n == ringLen || len(s.free) == 0 {
		st.stats.QueueFull++
		return ErrFull
	}
	buf := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	seq := q.nextSeq
	q.nextSeq = (q.nextSeq + 1) % wlan.SeqModulo
	h := wlan.Header{Seq: wlan.NewSeqControl(seq, 0), QoS: wlan.NewQoSControl(tid, wlan.AckNormal, false, false)}
	// Addresses per 802.11-2016 Table 9-26.
	var flags wlan.FrameControl
	h.Addr1, h.Addr2 = st.addr, s.cfg.Own
	switch {
	case st.fourAddr:
		flags = wlan.FlagToDS | wlan.FlagFromDS
		h.Addr3, h.Addr4 = da, sa
	case s.cfg.Station:
		flags = wlan.FlagToDS
		h.Addr3 = da
	default:
		flags = wlan.FlagFromDS
		h.Addr3 = sa
	}
	prot := st.protected()
	if prot {
		flags |= wlan.FlagProtected
	}
	h.FC = wlan.NewFrameControl(wlan.KindQoSData, flags)
	buf = wlan.AppendHeader(buf[:0], &h)
	if prot {
		var ph [ccmp.HeaderLen]byte // the radio (or Seal) fills in the PN
		buf = append(buf, ph[:]...)
	}
	buf = wlan.AppendMSDU(buf, etherType, payload)
	if prot {
		var mic [ccmp.MICLen]byte
		buf = append(buf, mic[:]...)
	}
	f := frame{buf: buf, seq: seq, msdus: 1, payload: len(payload), body: uint16(wlan.HeaderLen(h.FC)), da: da, sa: sa}
	f.lens[0] = uint16(wlan.MSDUHeaderLen + len(payload))
	if prot {
		f.body += ccmp.HeaderLen
	}
	q.ring[(q.head+q.n)%ringLen] = f
	q.n++
	st.stats.Enqueued++
	s.kick()
	return nil
}

// protected: the station's MPDUs carry CCMP (by the radio or Seal).
func (st *Station) protected() bool { return st.key != radio.NoKey || st.seal != nil }

// StartSeq returns the starting sequence number for a Block Ack
// agreement on st's tid: the oldest frame not yet acknowledged, or the
// next one queued (802.11-2016 10.24.2: the SSN of the ADDBA Request).
func (s *Scheduler) StartSeq(st *Station, tid uint8) uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tid >= numTIDs || st.tids[tid] == nil {
		return 0
	}
	q := st.tids[tid]
	if q.n > 0 {
		return q.ring[q.head].seq
	}
	return q.nextSeq
}

func (s *Scheduler) newTID(st *Station, tid uint8) *tidQueue {
	q := &tidQueue{st: st, tid: tid, window: st.baWindow}
	q.req.Cookie = q
	q.req.Done = s.done
	st.tids[tid] = q
	return q
}

// SetBAWindow sets the Block Ack window of st's tid: the buffer size of
// the agreement wlan/ba negotiated (1..64), or 0 when there is none:
// then frames go one at a time with a normal ACK and no BlockAckReq.
func (s *Scheduler) SetBAWindow(st *Station, tid uint8, n int) error {
	if tid >= numTIDs {
		return ErrTID
	}
	if n < 0 || n > Window {
		return ErrWindow
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := st.tids[tid]
	if q == nil {
		q = s.newTID(st, tid)
	}
	q.window = n
	if !q.inflight {
		s.send(q)
	}
	return nil
}

// fitsAMSDU reports whether an MSDU of msdu bytes (LLC/SNAP included)
// may be packed into the queue's tail frame: not yet sent, room for a
// subframe, and the TXOP plan at the peer's current rate puts all its
// MSDUs into one A-MSDU.
func (s *Scheduler) fitsAMSDU(st *Station, tail *frame, msdu int) bool {
	if tail.sent || tail.sealed || tail.done || int(tail.msdus) >= MaxAMSDUSubframes {
		return false
	}
	_, rix := st.node.Current(len(tail.buf) + msdu)
	if rix < 0 {
		rix = 0
	}
	plan := agg.TXOP{PHY: s.cfg.PHY, Rate: st.table.Rate(rix), MaxAMSDU: s.cfg.MaxAMSDU, LimitUs: s.cfg.TXOPLimitUs}
	lens := s.planLens[:0]
	for i := 0; i < int(tail.msdus); i++ {
		lens = append(lens, int(tail.lens[i]))
	}
	lens = append(lens, msdu)
	n, _, err := plan.Plan(lens, tail.seq, s.planOut[:])
	return err == nil && n == 1 && s.planOut[0].N == len(lens)
}

// pack appends an MSDU to the tail frame as an A-MSDU subframe, turning
// a plain MSDU frame into an A-MSDU first: A-MSDU Present set, Address
// 3 (and 4) the BSSID (802.11-2016 Table 9-26), the first MSDU
// re-framed as a subframe with its DA and SA.
func (s *Scheduler) pack(st *Station, f *frame, da, sa wlan.MAC, etherType uint16, payload []byte) {
	mic := 0
	if st.protected() {
		mic = ccmp.MICLen
	}
	buf := f.buf[:len(f.buf)-mic]
	start := int(f.body)
	if f.msdus == 1 {
		s.scratch = append(s.scratch[:0], buf[start:]...)
		buf = buf[:start]
		hl := start
		if mic != 0 {
			hl -= ccmp.HeaderLen
		}
		buf[hl-2] |= amsduBit
		bssid := s.cfg.Own
		if s.cfg.Station {
			bssid = st.addr
		}
		copy(buf[16:22], bssid[:])
		if st.fourAddr {
			copy(buf[24:30], bssid[:])
		}
		buf = wlan.AppendAMSDUSubframe(buf, start, f.da, f.sa, s.scratch)
	}
	s.scratch = wlan.AppendMSDU(s.scratch[:0], etherType, payload)
	buf = wlan.AppendAMSDUSubframe(buf, start, da, sa, s.scratch)
	if mic != 0 {
		var m [ccmp.MICLen]byte
		buf = append(buf, m[:]...)
	}
	f.buf = buf
	f.lens[f.msdus] = uint16(len(s.scratch))
	f.msdus++
	f.payload += len(payload)
}

// Kick starts exchanges for every idle TID with frames (after the radio
// was restarted, say).
func (s *Scheduler) Kick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kick()
}

// kick serves the stations round-robin.
func (s *Scheduler) kick() {
	n := len(s.stations)
	for i := 0; i < n; i++ {
		st := s.stations[(s.rr+i)%n]
		for _, tid := range tidOrder {
			if q := st.tids[tid]; q != nil && !q.inflight {
				s.send(q)
			}
		}
	}
	if n > 0 {
		s.rr = (s.rr + 1) % n
	}
}

// send forms q's next exchange and hands it to the radio.
func (s *Scheduler) send(q *tidQueue) {
	if q.needBAR {
		s.sendBAR(q)
		return
	}
	q.barTries = 0
	// Candidates: unacknowledged frames within the window, in order;
	// without an agreement, the oldest alone.
	lim := q.n
	if w := q.window; lim > w {
		lim = w
		if w == 0 {
			lim = 1
		}
	}
	k := 0
	queued := 0
	for i := 0; i < lim; i++ {
		p := (q.head + i) % ringLen
		f := &q.ring[p]
		if f.done {
			continue
		}
		q.idx[k] = p
		q.lens[k] = len(f.buf) + 4 // FCS
		k++
	}
	if k == 0 {
		return
	}
	if q.st.seal != nil {
		if k = s.sealAll(q, k); k == 0 {
			return
		}
	}
	for i := 0; i < k; i++ {
		queued += agg.SubframeLen(q.lens[i], 0, i == k-1)
	}
	st := q.st
	t := st.table
	d := &q.dec
	st.node.Pick(s.cfg.Now(), queued, agg.SubframeLen(q.lens[0], 0, true), d)
	n, psdu := 1, q.lens[0]
	if t.HT && d.MaxBytes > 0 && k > 1 {
		r0 := t.Rate(int(d.Series[0].Rix))
		lim := agg.Limits{MaxBytes: d.MaxBytes, MaxFrames: q.window,
			MinSpacing: agg.SpacingBytes(r0, t.Density)}
		var err error
		n, psdu, err = agg.Form(q.lens[:k], lim)
		if err != nil || n == 0 {
			n, psdu = 1, q.lens[0]
		}
		if n > 1 {
			t.FitSchedule(d, psdu)
		}
	}
	q.psdu = psdu
	req := &q.req
	req.MPDUs = q.mpdus[:n]
	for i := 0; i < n; i++ {
		req.MPDUs[i] = q.ring[q.idx[i]].buf
	}
	for i := range req.Series {
		req.Series[i] = radio.Series{}
		if d.Series[i].Tries > 0 {
			req.Series[i] = radio.Series{Rate: t.Rate(int(d.Series[i].Rix)), Tries: d.Series[i].Tries}
		}
	}
	if req.Series[0].Tries == 0 {
		// FitSchedule left nothing at series 0: send the head alone.
		req.MPDUs = q.mpdus[:1]
		q.psdu = q.lens[0]
		req.Series[0] = radio.Series{Rate: t.Rate(int(d.Series[0].Rix)), Tries: 1}
		d.Series[0].Tries = 1
	}
	req.Key = st.key
	req.NoAck = false
	req.RTS = d.RTS
	req.Queue = tidAC[q.tid]
	q.isBAR = false
	if err := s.cfg.Radio.Transmit(req); err != nil {
		return // the radio's queue is full: the next completion kicks
	}
	for i := range req.MPDUs {
		q.ring[q.idx[i]].sent = true
	}
	q.inflight = true
	st.stats.Exchanges++
	st.stats.Subframes += uint64(len(req.MPDUs))
	st.stats.AggHist[histBin(len(req.MPDUs))]++
}

// sealAll protects the candidates not yet protected, in sequence order;
// a frame that cannot be sealed is dropped (the candidates from it on
// wait for the next exchange).
func (s *Scheduler) sealAll(q *tidQueue, k int) int {
	for i := 0; i < k; i++ {
		f := &q.ring[q.idx[i]]
		if f.sealed {
			continue
		}
		if err := q.st.seal(f.buf); err != nil {
			f.done, f.dropped = true, true
			q.st.stats.Dropped++
			q.st.stats.TxErrors++
			return i
		}
		f.sealed = true
	}
	return k
}

func histBin(n int) int {
	b := bits.Len(uint(n)) - 1
	if b > 6 {
		b = 6
	}
	return b
}

// sendBAR sends a BlockAckReq moving the recipient's window to the
// oldest outstanding frame once a dropped frame has left the window
// (802.11-2016 10.24.7.4), so the recipient stops waiting for it.
func (s *Scheduler) sendBAR(q *tidQueue) {
	ssn := q.nextSeq
	if q.n > 0 {
		ssn = q.ring[q.head].seq
	}
	bar := wlan.BlockAckReq{TID: q.tid, StartSeq: ssn}
	if q.barBuf == nil {
		q.barBuf = make([]byte, 0, 32)
	}
	q.barBuf = wlan.AppendBlockAckReq(q.barBuf[:0], 0, q.st.addr, s.cfg.Own, &bar)
	req := &q.req
	req.MPDUs = q.mpdus[:1]
	req.MPDUs[0] = q.barBuf
	req.Series = [radio.MaxSeries]radio.Series{{Rate: airtime.Legacy(barRateKbps), Tries: 4}}
	req.Key = radio.NoKey
	req.NoAck = false
	req.RTS = false
	req.Queue = tidAC[q.tid]
	q.isBAR = true
	if err := s.cfg.Radio.Transmit(req); err != nil {
		return
	}
	q.inflight = true
	q.needBAR = false
	q.st.stats.BARs++
}

// done is every request's completion.
func (s *Scheduler) done(req *radio.TxRequest, ts *radio.TxStatus) {
	q := req.Cookie.(*tidQueue)
	s.mu.Lock()
	defer s.mu.Unlock()
	q.inflight = false
	st := q.st
	if st.gone {
		s.flush(q)
		return
	}
	if q.isBAR {
		if ts.Err != nil || !ts.Acked {
			q.barTries++
			q.needBAR = q.barTries < maxBARTries
			if !q.needBAR {
				st.stats.BARFailed++
			}
		}
		s.kick()
		return
	}
	n := len(req.MPDUs)
	if ts.Err != nil {
		st.stats.TxErrors++
		s.kick()
		return
	}
	acked := ts.BlockAck
	if !ts.Acked {
		acked = 0
	}
	if ts.LongTries > 1 {
		st.stats.HWRetries += uint64(ts.LongTries - 1)
	}
	d := &q.dec
	c := rate.Completion{
		FinalSeries: ts.FinalSeries, FinalRix: -1, LongTries: ts.LongTries, ShortTries: ts.ShortTries,
		Frames: n, Bad: n - bits.OnesCount64(acked), Acked: ts.Acked, Bytes: q.psdu,
	}
	if ts.FinalSeries >= 0 && ts.FinalSeries < rate.MaxSeries {
		rix := int(d.Series[ts.FinalSeries].Rix)
		c.FinalRix = rix
		if rix < rate.MaxRates {
			ps := &st.stats.PerRate[rix]
			ps.Exchanges++
			ps.Subframes += uint64(n)
			ps.Acked += uint64(bits.OnesCount64(acked))
		}
	}
	st.node.Complete(s.cfg.Now(), d, &c)
	for i := 0; i < n; i++ {
		f := &q.ring[q.idx[i]]
		if acked&(1<<uint(i)) != 0 {
			st.stats.Acked++
			st.stats.PayloadAck += uint64(f.payload)
			f.done = true
			continue
		}
		f.retries++
		st.stats.Retries++
		if int(f.retries) > s.cfg.SoftRetries {
			st.stats.Dropped++
			f.done = true
			f.dropped = true
		}
	}
	// Slide the window past the done frames at its start.
	for q.n > 0 && q.ring[q.head].done {
		f := &q.ring[q.head]
		if f.dropped && q.window > 0 {
			q.needBAR = true
		}
		s.free = append(s.free, f.buf[:0])
		*f = frame{}
		q.head = (q.head + 1) % ringLen
		q.n--
	}
	s.kick()
}
