package medium

import (
	"encoding/binary"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/radio"
)

// The air: a discrete-event simulation in whole microseconds. A PPDU is
// on the air over [start, end); a receiver loses it when another PPDU it
// can hear (or its own) overlaps it, or subframe by subframe on the
// link's error model. Responses (ACK, BlockAck) go SIFS after the PPDU
// they answer without carrier sense; everything else contends.

type airKind uint8

const (
	kindData   airKind = iota // a request's PPDU (data or management)
	kindBeacon                // a beacon at TBTT
	kindResp                  // an ACK, BlockAck or CTS
	kindRTS                   // an RTS before a request's PPDU
)

// shortRetryLimit is dot11ShortRetryLimit (802.11-2016 Annex C: 7): RTS
// attempts without a CTS before the request fails.
const shortRetryLimit = 7

// onAir is one PPDU on the air.
type onAir struct {
	kind       airKind
	from       *SimRadio
	to         *SimRadio // kindResp: the radio the response is for
	xid        uint64    // the exchange it belongs to
	start, end int64
	rate       airtime.Rate
	ack        airtime.Ack
	frames     [][]byte
	corrupt    uint64 // bit per SimRadio index: lost there to an overlap
	respBuf    []byte
	one        [1][]byte
}

// pendingResp is a response scheduled SIFS after the PPDU it answers,
// or (launch) a request's PPDU SIFS after its CTS.
type pendingResp struct {
	a      *onAir
	start  int64
	launch bool
}

// delivery is a callback to run without the lock.
type delivery struct {
	rcv  radio.Receiver
	dev  Device
	buf  []byte
	rst  radio.RxStatus
	req  *radio.TxRequest
	tst  radio.TxStatus
	done bool
}

// Endpoint is a radio on the medium, of either kind (a Device's Radio or
// a SimRadio), for the per-link settings.
type Endpoint interface{ endpointID() int }

// hears reports whether b can hear a (same channel, not hidden).
func (m *Medium) hears(b, a *SimRadio) bool {
	if a == b {
		return true
	}
	if a.ch.Number != b.ch.Number || a.ch.Band5G != b.ch.Band5G {
		return false
	}
	return b.deaf&(1<<uint(a.idx)) == 0
}

// SetHidden makes two radios unable to hear each other (a hidden node
// pair) or, with hidden false, restores it.
func (m *Medium) SetHidden(a, b *SimRadio, hidden bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if hidden {
		a.deaf |= 1 << uint(b.idx)
		b.deaf |= 1 << uint(a.idx)
	} else {
		a.deaf &^= 1 << uint(b.idx)
		b.deaf &^= 1 << uint(a.idx)
	}
}

func (m *Medium) timeAt(us int64) time.Time {
	return m.start.Add(time.Duration(us) * time.Microsecond)
}

func (m *Medium) getAir() *onAir {
	if n := len(m.airPool); n > 0 {
		a := m.airPool[n-1]
		m.airPool = m.airPool[:n-1]
		return a
	}
	return &onAir{}
}

func (m *Medium) putAir(a *onAir) {
	rb := a.respBuf
	*a = onAir{respBuf: rb[:0]}
	m.airPool = append(m.airPool, a)
}

func (m *Medium) getBuf() []byte {
	if n := len(m.bufPool); n > 0 {
		b := m.bufPool[n-1]
		m.bufPool = m.bufPool[:n-1]
		return b[:0]
	}
	return make([]byte, 0, MaxFrame+64)
}

// complete queues a request's Done.
func (m *Medium) complete(r *SimRadio, req *radio.TxRequest, st radio.TxStatus) {
	if st.Err == nil {
		if st.Acked {
			r.stats.TxAcked++
		} else if !req.NoAck {
			r.stats.TxFailed++
		}
	}
	if req.Done == nil {
		return
	}
	m.outbox = append(m.outbox, delivery{req: req, tst: st, done: true})
}

// runOutbox runs the queued callbacks without the lock, until none is
// left (callbacks may queue more by transmitting).
func (m *Medium) runOutbox() {
	m.mu.Lock()
	if m.draining {
		m.mu.Unlock()
		return
	}
	m.draining = true
	for len(m.outbox) > 0 {
		batch := m.outbox
		m.outbox = m.spare[:0]
		m.spare = nil
		m.mu.Unlock()
		for i := range batch {
			d := &batch[i]
			switch {
			case d.done:
				d.req.Done(d.req, &d.tst)
			case d.rcv != nil:
				d.rcv.Receive(d.buf, &d.rst)
			case d.dev != nil:
				d.dev.Receive(d.buf)
			}
		}
		m.mu.Lock()
		for i := range batch {
			if batch[i].buf != nil {
				m.bufPool = append(m.bufPool, batch[i].buf)
			}
			batch[i] = delivery{}
		}
		m.spare = batch[:0]
	}
	m.draining = false
	m.mu.Unlock()
}

// nextEvent returns the time of the next event, or -1.
func (m *Medium) nextEvent() int64 {
	next := int64(-1)
	min := func(t int64) {
		if t < m.us {
			t = m.us
		}
		if next < 0 || t < next {
			next = t
		}
	}
	for _, a := range m.active {
		min(a.end)
	}
	for _, p := range m.resps {
		min(p.start)
	}
	for _, r := range m.sims {
		if t := r.startAt(); t >= 0 {
			min(t)
		}
		if r.waitUntil != 0 {
			min(r.waitUntil)
		}
		if r.navUntil > m.us {
			min(r.navUntil)
		}
		if r.nextTBTT >= 0 {
			min(r.nextTBTT)
		}
	}
	return next
}

// advance runs the air up to and including time to (µs).
func (m *Medium) advance(to int64) {
	for {
		m.mu.Lock()
		t := m.nextEvent()
		if t < 0 || t > to {
			if to > m.us {
				m.us = to
			}
			m.mu.Unlock()
			m.runOutbox()
			return
		}
		m.us = t
		m.process(t)
		m.mu.Unlock()
		m.runOutbox()
	}
}

// process handles every event at time t.
func (m *Medium) process(t int64) {
	// 1. PPDUs ending now.
	for i := 0; i < len(m.active); {
		a := m.active[i]
		if a.end > t {
			i++
			continue
		}
		m.active[i] = m.active[len(m.active)-1]
		m.active[len(m.active)-1] = nil
		m.active = m.active[:len(m.active)-1]
		m.finish(a, t)
		m.putAir(a)
	}
	// 2. Responses due now.
	for i := 0; i < len(m.resps); {
		p := m.resps[i]
		if p.start > t {
			i++
			continue
		}
		m.resps[i] = m.resps[len(m.resps)-1]
		m.resps = m.resps[:len(m.resps)-1]
		if !p.launch {
			m.putOnAir(p.a, t)
			continue
		}
		if r := p.a.from; r.cur != nil && r.waitXID == p.a.xid {
			m.launch(r, p.a, t)
		} else {
			m.putAir(p.a) // stopped meanwhile
		}
	}
	// 3. ACK/BlockAck timeouts.
	for _, r := range m.sims {
		if r.waitUntil != 0 && r.waitUntil <= t {
			m.attemptFailed(r, t)
		}
	}
	// 4. TBTTs.
	for _, r := range m.sims {
		if r.nextTBTT >= 0 && r.nextTBTT <= t {
			r.nextTBTT += int64(r.beaconTU) * tu
			if len(r.beacon) > 0 && r.on {
				r.beaconDue = true
			}
		}
	}
	// 5. Radios whose backoff ends now start together (and collide if
	// they hear a common receiver).
	starting := m.starting[:0]
	for _, r := range m.sims {
		if st := r.startAt(); st >= 0 && st <= t {
			starting = append(starting, r)
		}
	}
	for _, r := range starting {
		m.startTx(r, t)
	}
	m.starting = starting[:0]
	// 6. Carrier sense: freeze backoffs on busy, note idle.
	for _, r := range m.sims {
		busy := r.waitUntil != 0 || r.navUntil > t
		for _, a := range m.active {
			if !busy && m.hears(r, a.from) {
				busy = true
			}
		}
		switch {
		case busy && r.idle:
			base := r.idleAt
			if r.readyAt > base {
				base = r.readyAt
			}
			base += r.aifs()
			if r.bo > 0 && t > base {
				el := int((t - base) / int64(m.phy.Slot))
				if el > r.bo {
					el = r.bo
				}
				r.bo -= el
			}
			r.idle = false
		case !busy && !r.idle:
			r.idle = true
			r.idleAt = t
		}
	}
}

// drawBackoff picks a backoff in [0, CW] slots (802.11-2016 10.3.3).
func (m *Medium) drawBackoff(r *SimRadio) {
	r.bo = m.rng.IntN(r.cw + 1)
}

// startTx puts the radio's beacon or its current request's next attempt
// on the air.
func (m *Medium) startTx(r *SimRadio, t int64) {
	if r.beaconDue {
		r.beaconDue = false
		a := m.getAir()
		a.kind, a.from = kindBeacon, r
		a.rate = airtime.Legacy(beaconRateKbps)
		a.ack = airtime.NoAck
		a.respBuf = append(a.respBuf[:0], r.beacon...)
		// The timestamp is the TSF when its first bit is on the air
		// (802.11-2016 11.1.3.1): after the PHY preamble and the header.
		pre := int64(m.phy.TxTime(a.rate, 0))
		binary.LittleEndian.PutUint64(a.respBuf[wlan.TimestampOffset:], uint64(t+pre+r.tsfOffset))
		a.one[0] = a.respBuf
		a.frames = a.one[:]
		r.stats.Beacons++
		m.putOnAir(a, t)
		return
	}
	if r.cur == nil {
		ac := r.nextAC()
		if r.queues[ac].size == 0 {
			return
		}
		req := r.queues[ac].pop()
		if !m.prepare(r, req, ac) {
			return
		}
	}
	req := r.cur
	for r.series < radio.MaxSeries && req.Series[r.series].Tries == 0 {
		r.series++
	}
	a := m.getAir()
	a.kind, a.from = kindData, r
	a.rate = req.Series[r.series].Rate
	a.frames = r.airFrames
	m.xid++
	a.xid = m.xid
	switch {
	case req.NoAck || r.airFrames[0][4]&1 != 0:
		a.ack = airtime.NoAck
	case len(r.airFrames) > 1:
		a.ack = airtime.BlockAck
	default:
		a.ack = airtime.NormalAck
	}
	// The Duration field covers the response (802.11-2016 9.2.5.7), as
	// the hardware fills it in; it is outside the CCMP AAD.
	dur := 0
	if a.ack != airtime.NoAck {
		dur = m.phy.SIFS + m.respTime(a)
	}
	for _, f := range r.airFrames {
		binary.LittleEndian.PutUint16(f[2:], uint16(dur))
	}
	r.bo = -1
	if !req.RTS || a.ack == airtime.NoAck {
		m.launch(r, a, t)
		return
	}
	// RTS/CTS first (802.11-2016 10.3.2.6): the RTS's duration covers
	// CTS, the PPDU and its response, so whoever hears the RTS or the CTS
	// sets its NAV for the exchange.
	rts := m.getAir()
	rts.kind, rts.from, rts.xid = kindRTS, r, a.xid
	rts.rate = m.phy.ControlRate(a.rate)
	cts := m.phy.TxTime(rts.rate, airtime.CTSLen)
	data := m.phy.TxTime(a.rate, psduLen(a.frames))
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindRTS, 0),
		Duration: uint16(3*m.phy.SIFS + cts + data + m.respTime(a))}
	copy(h.Addr1[:], r.airFrames[0][4:10])
	h.Addr2 = r.addr
	rts.respBuf = wlan.AppendHeader(rts.respBuf[:0], &h)
	rts.one[0] = rts.respBuf
	rts.frames = rts.one[:]
	r.pendingData = a
	m.putOnAir(rts, t)
	// CTSTimeout: SIFS + slot + the CTS (802.11-2016 10.3.2.7).
	r.waitUntil = rts.end + int64(m.phy.SIFS+m.phy.Slot+cts)
	r.waitXID = a.xid
	r.rtsWait = true
}

// respTime is the airtime of the response a PPDU asks for.
func (m *Medium) respTime(a *onAir) int {
	n := airtime.ACKLen
	if a.ack == airtime.BlockAck {
		n = airtime.BlockAckLen
	}
	return m.phy.TxTime(m.phy.ControlRate(a.rate), n)
}

// launch puts a request's PPDU on the air: one more data transmission.
func (m *Medium) launch(r *SimRadio, a *onAir, t int64) {
	if r.longTries > 0 {
		r.stats.TxRetries++
		for _, f := range r.airFrames {
			f[1] |= 0x08 // Retry (802.11-2016 9.2.4.1.6)
		}
	}
	r.longTries++
	r.triesIn++
	r.stats.TxPPDUs++
	m.putOnAir(a, t)
	r.waitUntil = 0
	if a.ack != airtime.NoAck {
		// ACKTimeout: SIFS + slot + the response (802.11-2016 10.3.2.9).
		r.waitUntil = a.end + int64(m.phy.SIFS+m.phy.Slot+m.respTime(a))
		r.waitXID = a.xid
	}
}

// prepare makes req the radio's current request: the air copies of its
// MPDUs, encrypted when it names a key. It reports false when req could
// not be sent (completed with the error).
func (m *Medium) prepare(r *SimRadio, req *radio.TxRequest, ac int) bool {
	for len(r.airBufs) < len(req.MPDUs) {
		r.airBufs = append(r.airBufs, make([]byte, 0, MaxFrame+64))
	}
	r.airFrames = r.airFrames[:0]
	for i, f := range req.MPDUs {
		var out []byte
		if req.Key != radio.NoKey {
			var err error
			out, err = r.keys.encrypt(r.airBufs[i][:0], req.Key, f)
			if err != nil {
				m.complete(r, req, radio.TxStatus{Err: err})
				r.airFrames = r.airFrames[:0]
				return false
			}
		} else {
			out = append(r.airBufs[i][:0], f...)
		}
		r.airBufs[i] = out[:0]
		r.airFrames = append(r.airFrames, out)
	}
	r.cur, r.curAC = req, ac
	r.series, r.triesIn, r.longTries, r.shortTries, r.rcvd = 0, 0, 0, 0, 0
	return true
}

// psduLen is the PSDU length of frames: one MPDU plus FCS, or the
// A-MPDU's subframes (delimiter, MPDU with FCS, padding).
func psduLen(frames [][]byte) int {
	if len(frames) == 1 {
		return len(frames[0]) + fcsLen
	}
	n := 0
	for i, f := range frames {
		n += agg.SubframeLen(len(f)+fcsLen, 0, i == len(frames)-1)
	}
	return n
}

// fcsLen is the FCS the radio adds to every MPDU.
const fcsLen = 4

// putOnAir starts a PPDU at t, marks the overlaps it causes, and
// captures its frames.
func (m *Medium) putOnAir(a *onAir, t int64) {
	a.start = t
	a.end = t + int64(m.phy.TxTime(a.rate, psduLen(a.frames)))
	for _, b := range m.active {
		for _, r := range m.sims {
			if m.hears(r, a.from) && m.hears(r, b.from) {
				bit := uint64(1) << uint(r.idx)
				a.corrupt |= bit
				b.corrupt |= bit
			}
		}
	}
	m.active = append(m.active, a)
	if m.capture != nil && m.capErr == nil {
		snr := m.txSNR(a.from)
		for i, f := range a.frames {
			in := rtInfo{rate: a.rate, ch: a.from.ch, snr: snr, inAMPDU: len(a.frames) > 1,
				last: i == len(a.frames)-1, ref: uint32(a.xid)}
			m.capBuf = appendRadiotap(m.capBuf[:0], &in)
			m.capBuf = append(m.capBuf, f...)
			m.capErr = m.capture.WritePacket(m.timeAt(t), m.capBuf)
		}
	}
	m.stats.Transmitted += uint64(len(a.frames))
}

// txSNR is the SNR written in the capture for frames from r: the best
// link from it.
func (m *Medium) txSNR(r *SimRadio) int {
	best := -100
	for _, o := range m.sims {
		if o != r {
			if s := int(m.linkSNR(r, o, m.us)); s > best {
				best = s
			}
		}
	}
	if best == -100 {
		best = defaultSNR
	}
	return best
}

// finish handles the end of PPDU a at t.
func (m *Medium) finish(a *onAir, t int64) {
	if a.kind == kindResp {
		m.finishResp(a, t)
		return
	}
	if a.kind == kindRTS {
		m.finishRTS(a, t)
		return
	}
	tx := a.from
	var ra wlan.MAC
	copy(ra[:], a.frames[0][4:10])
	for _, r := range m.sims {
		if r == tx || !r.on || !m.hears(r, tx) {
			continue
		}
		if a.corrupt&(1<<uint(r.idx)) != 0 {
			r.stats.RxCollided++
			continue
		}
		if a.rate.HT40 && !r.ch.Width40 {
			// A 20 MHz receiver senses a 40 MHz PPDU but cannot decode it.
			r.stats.RxFCSErrors += uint64(len(a.frames))
			continue
		}
		ok := m.receiveMask(tx, r, a, t)
		for i, f := range a.frames {
			if ok&(1<<uint(i)) == 0 {
				r.stats.RxFCSErrors++
				continue
			}
			m.deliverSim(r, f, a, i, t)
		}
		switch {
		case ok == 0:
		case ra != r.addr:
			m.setNAV(r, a.frames[0], t)
		case a.kind == kindData && a.ack != airtime.NoAck && tx.waitXID == a.xid:
			m.respond(r, tx, a, ok, t)
		}
	}
	for _, l := range m.radios {
		for _, f := range a.frames {
			if p := m.loss[[2]int{tx.id, l.id}]; p > 0 && m.rng.Float64() < p {
				m.stats.Lost++
				continue
			}
			m.stats.Delivered++
			buf := append(m.getBuf(), f...)
			m.outbox = append(m.outbox, delivery{dev: l.dev, buf: buf})
		}
	}
	if a.kind == kindData && a.ack == airtime.NoAck && tx.cur != nil {
		m.complete(tx, tx.cur, radio.TxStatus{FinalSeries: tx.series, LongTries: tx.longTries, ShortTries: tx.shortTries})
		m.exchangeDone(tx, t, true)
	}
}

// deliverSim hands subframe i of a to r's receiver, through its key
// cache.
func (m *Medium) deliverSim(r *SimRadio, f []byte, a *onAir, i int, t int64) {
	if r.rx == nil {
		return
	}
	m.stats.Delivered++
	r.stats.RxFrames++
	d := delivery{rcv: r.rx}
	d.rst = radio.RxStatus{
		Time: m.timeAt(t), Rate: a.rate, RSSI: int8(m.linkSNR(a.from, r, a.start)), Channel: r.ch.Number,
		InAMPDU: len(a.frames) > 1, AMPDUFirst: len(a.frames) > 1 && i == 0,
		AMPDULast: len(a.frames) > 1 && i == len(a.frames)-1,
	}
	d.buf = m.rxInto(r, m.getBuf(), f, &d.rst)
	m.outbox = append(m.outbox, d)
}

// rxInto copies f into buf through r's key cache.
func (m *Medium) rxInto(r *SimRadio, buf, f []byte, st *radio.RxStatus) []byte {
	if len(f) > 1 && f[1]&0x40 != 0 && wlan.FrameControl(binary.LittleEndian.Uint16(f)).Kind().Type() == wlan.TypeData {
		out, found, err := r.keys.decrypt(buf, f)
		switch {
		case found && err == nil:
			st.Decrypted = true
			r.stats.RxDecrypted++
			return out
		case found:
			st.DecryptErr = true
			r.stats.RxDecryptErrors++
		}
	}
	return append(buf[:0], f...)
}

// respond schedules r's ACK or BlockAck to tx for PPDU a.
func (m *Medium) respond(r, tx *SimRadio, a *onAir, ok uint64, t int64) {
	resp := m.getAir()
	resp.kind, resp.from, resp.to, resp.xid = kindResp, r, tx, a.xid
	resp.rate = m.phy.ControlRate(a.rate)
	resp.ack = airtime.NoAck
	if a.ack == airtime.BlockAck {
		// The recipient's scoreboard: every subframe of the exchange
		// received so far (802.11-2016 10.24.7.3).
		tx.rcvd |= ok
		ssn := seqOf(a.frames[0])
		var bm uint64
		for i, f := range a.frames {
			if tx.rcvd&(1<<uint(i)) != 0 {
				if d := wlan.SeqSub(seqOf(f), ssn); d < 64 {
					bm |= 1 << d
				}
			}
		}
		b := wlan.BlockAck{TID: tidOf(a.frames[0]), StartSeq: ssn, Bitmap: bm}
		resp.respBuf = wlan.AppendBlockAck(resp.respBuf[:0], 0, tx.addr, r.addr, &b)
		r.stats.BlockAcks++
	} else {
		h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindAck, 0), Addr1: tx.addr}
		resp.respBuf = wlan.AppendHeader(resp.respBuf[:0], &h)
		r.stats.AcksSent++
	}
	resp.one[0] = resp.respBuf
	resp.frames = resp.one[:]
	m.resps = append(m.resps, pendingResp{a: resp, start: t + int64(m.phy.SIFS)})
}

// setNAV sets r's NAV from the Duration field of a frame it decoded
// that was not addressed to it (802.11-2016 10.3.2.4).
func (m *Medium) setNAV(r *SimRadio, f []byte, t int64) {
	d := binary.LittleEndian.Uint16(f[2:])
	if d&0x8000 != 0 {
		return // an AID or reserved, not a duration
	}
	if end := t + int64(d); end > r.navUntil {
		r.navUntil = end
	}
}

// finishRTS handles the end of an RTS: its receiver answers with a CTS
// if its NAV is clear (802.11-2016 10.3.2.7); the others set their NAV.
func (m *Medium) finishRTS(a *onAir, t int64) {
	tx := a.from
	f := a.frames[0]
	for _, r := range m.sims {
		if r == tx || !r.on || !m.hears(r, tx) {
			continue
		}
		if a.corrupt&(1<<uint(r.idx)) != 0 {
			r.stats.RxCollided++
			continue
		}
		if !m.linkOK(tx, r, a.rate, len(f)+fcsLen, a.start, 0) {
			continue
		}
		if wlan.MAC(f[4:10]) != r.addr {
			m.setNAV(r, f, t)
			continue
		}
		if r.navUntil > t || tx.waitXID != a.xid {
			continue
		}
		resp := m.getAir()
		resp.kind, resp.from, resp.to, resp.xid = kindResp, r, tx, a.xid
		resp.rate = a.rate
		resp.ack = airtime.NoAck
		cts := m.phy.TxTime(a.rate, airtime.CTSLen)
		d := int(binary.LittleEndian.Uint16(f[2:])) - m.phy.SIFS - cts
		if d < 0 {
			d = 0
		}
		h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindCTS, 0), Duration: uint16(d), Addr1: tx.addr}
		resp.respBuf = wlan.AppendHeader(resp.respBuf[:0], &h)
		resp.one[0] = resp.respBuf
		resp.frames = resp.one[:]
		r.stats.CTSSent++
		m.resps = append(m.resps, pendingResp{a: resp, start: t + int64(m.phy.SIFS)})
	}
	for _, l := range m.radios {
		m.outbox = append(m.outbox, delivery{dev: l.dev, buf: append(m.getBuf(), f...)})
	}
}

// finishResp handles the end of an ACK, BlockAck or CTS at the radio it
// is for; the others that decode it set their NAV from it.
func (m *Medium) finishResp(a *onAir, t int64) {
	tx := a.to
	f := a.frames[0]
	for _, l := range m.radios {
		buf := append(m.getBuf(), f...)
		m.outbox = append(m.outbox, delivery{dev: l.dev, buf: buf})
	}
	for _, r := range m.sims {
		if r != tx && r != a.from && r.on && m.hears(r, a.from) && a.corrupt&(1<<uint(r.idx)) == 0 &&
			m.linkOK(a.from, r, a.rate, len(f)+fcsLen, a.start, 0) {
			m.setNAV(r, f, t)
		}
	}
	if tx.waitUntil == 0 || tx.waitXID != a.xid || tx.cur == nil || !m.hears(tx, a.from) {
		return
	}
	if a.corrupt&(1<<uint(tx.idx)) != 0 {
		tx.stats.RxCollided++
		return
	}
	if !m.linkOK(a.from, tx, a.rate, len(f)+fcsLen, a.start, 0) {
		return
	}
	if wlan.FrameControl(binary.LittleEndian.Uint16(f)).Kind() == wlan.KindCTS {
		if !tx.rtsWait || tx.pendingData == nil {
			return
		}
		// The PPDU follows SIFS after the CTS; until then the radio
		// stays busy.
		tx.rtsWait = false
		m.resps = append(m.resps, pendingResp{a: tx.pendingData, start: t + int64(m.phy.SIFS), launch: true})
		tx.pendingData = nil
		tx.waitUntil = t + int64(m.phy.SIFS)
		return
	}
	st := radio.TxStatus{Acked: true, FinalSeries: tx.series, LongTries: tx.longTries, ShortTries: tx.shortTries}
	if len(tx.airFrames) > 1 {
		ba, err := parseBlockAck(f)
		if err != nil {
			m.stats.BadResponses++
			return
		}
		st.BlockAck = mapBlockAck(&ba, tx.airFrames)
	} else {
		st.BlockAck = 1
	}
	m.complete(tx, tx.cur, st)
	m.exchangeDone(tx, t, true)
}

// parseBlockAck parses a compressed BlockAck frame from the air.
func parseBlockAck(f []byte) (wlan.BlockAck, error) {
	if len(f) < wlan.CtrlHeaderLen {
		return wlan.BlockAck{}, wlan.ErrShort
	}
	return wlan.ParseBlockAck(f[wlan.CtrlHeaderLen:])
}

// mapBlockAck maps a BlockAck's bitmap (relative to its starting
// sequence number) to the order of the MPDUs of the request it answers:
// bit i of the result is MPDU i.
func mapBlockAck(ba *wlan.BlockAck, mpdus [][]byte) uint64 {
	var out uint64
	for i, f := range mpdus {
		if d := wlan.SeqSub(seqOf(f), ba.StartSeq); d < 64 && ba.Bitmap&(1<<d) != 0 {
			out |= 1 << uint(i)
		}
	}
	return out
}

// attemptFailed handles an ACK timeout: the next try, the next series,
// or the end of the schedule.
func (m *Medium) attemptFailed(r *SimRadio, t int64) {
	r.waitUntil = 0
	req := r.cur
	if req == nil {
		return
	}
	if r.rtsWait {
		// No CTS: a short retry, no data transmission spent.
		r.rtsWait = false
		m.putAir(r.pendingData)
		r.pendingData = nil
		r.shortTries++
		if r.shortTries >= shortRetryLimit {
			m.complete(r, req, radio.TxStatus{FinalSeries: r.series, LongTries: r.longTries, ShortTries: r.shortTries})
			m.exchangeDone(r, t, false)
			return
		}
	} else if r.triesIn >= int(req.Series[r.series].Tries) {
		last := r.series
		r.series++
		r.triesIn = 0
		for r.series < radio.MaxSeries && req.Series[r.series].Tries == 0 {
			r.series++
		}
		if r.series >= radio.MaxSeries {
			m.complete(r, req, radio.TxStatus{FinalSeries: last, LongTries: r.longTries, ShortTries: r.shortTries})
			m.exchangeDone(r, t, false)
			return
		}
	}
	// Retry: contention window doubles (802.11-2016 10.3.3).
	if c := 2*r.cw + 1; c <= edca[r.curAC].cwMax {
		r.cw = c
	} else {
		r.cw = edca[r.curAC].cwMax
	}
	m.drawBackoff(r)
	r.readyAt = t
}

// exchangeDone ends the current request and draws the backoff for the
// next (post-backoff, 802.11-2016 10.22.2.3).
func (m *Medium) exchangeDone(r *SimRadio, t int64, reset bool) {
	r.endExchange()
	r.cw = edca[r.nextAC()].cwMin
	m.drawBackoff(r)
	r.readyAt = t
}
