package medium

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
)

var (
	macA = wlan.MAC{2, 0, 0, 0, 0, 0xa}
	macB = wlan.MAC{2, 0, 0, 0, 0, 0xb}
	macC = wlan.MAC{2, 0, 0, 0, 0, 0xc}
)

type rxRecord struct {
	frame []byte
	st    radio.RxStatus
}

type rxLog struct{ got []rxRecord }

func (l *rxLog) Receive(f []byte, st *radio.RxStatus) {
	l.got = append(l.got, rxRecord{append([]byte(nil), f...), *st})
}

type doneLog struct {
	st  []radio.TxStatus
	at  []time.Time
	med *Medium
}

func (d *doneLog) done(_ *radio.TxRequest, st *radio.TxStatus) {
	d.st = append(d.st, *st)
	d.at = append(d.at, d.med.Now())
}

func newRadios(t *testing.T, cfg Config, macs ...wlan.MAC) (*Medium, []*SimRadio, []*rxLog) {
	t.Helper()
	if cfg.Start.IsZero() {
		cfg.Start = time.Unix(1_800_000_000, 0)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rs []*SimRadio
	var logs []*rxLog
	for _, a := range macs {
		r, err := m.NewRadio(RadioConfig{Addr: a, Channel: radio.Channel{Number: 36, Band5G: true, Width40: true, Above: true}})
		if err != nil {
			t.Fatal(err)
		}
		l := &rxLog{}
		if err := r.Start(l); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		logs = append(logs, l)
	}
	return m, rs, logs
}

// qosData builds a QoS data MPDU from ta to ra with sequence number seq
// and the body, with room (zeroed) for CCMP when protected.
func qosData(ra, ta wlan.MAC, seq uint16, body []byte, protected bool) []byte {
	var flags wlan.FrameControl
	if protected {
		flags = wlan.FlagProtected
	}
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindQoSData, flags), Addr1: ra, Addr2: ta, Addr3: ta,
		Seq: wlan.NewSeqControl(seq, 0), QoS: wlan.NewQoSControl(0, wlan.AckNormal, false, false)}
	f := wlan.AppendHeader(nil, &h)
	if protected {
		f = append(f, make([]byte, ccmp.HeaderLen)...)
	}
	f = append(f, body...)
	if protected {
		f = append(f, make([]byte, ccmp.MICLen)...)
	}
	return f
}

var mcs7 = airtime.MCS(7, false, false)

func TestUnicastIsAcked(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 1}, macA, macB)
	d := &doneLog{med: m}
	f := qosData(macB, macA, 10, []byte("hello"), false)
	req := &radio.TxRequest{MPDUs: [][]byte{f}, Key: radio.NoKey, Done: d.done}
	req.Series[0] = radio.Series{Rate: mcs7, Tries: 4}
	t0 := m.Now()
	if err := rs[0].Transmit(req); err != nil {
		t.Fatal(err)
	}
	m.Run(10 * time.Millisecond)
	if len(d.st) != 1 || !d.st[0].Acked || d.st[0].LongTries != 1 || d.st[0].BlockAck != 1 || d.st[0].FinalSeries != 0 {
		t.Fatalf("status %+v", d.st)
	}
	if len(logs[1].got) != 1 || !bytes.Equal(logs[1].got[0].frame[4:], f[4:]) {
		t.Fatalf("B got %+v", logs[1].got)
	}
	// The radio filled in the Duration: SIFS and the ACK at the control
	// rate for MCS 7 (24 Mb/s: 28 µs).
	if d := binary.LittleEndian.Uint16(logs[1].got[0].frame[2:]); d != 16+28 {
		t.Errorf("duration %d", d)
	}
	if st := logs[1].got[0].st; st.Rate != mcs7 || st.Decrypted || st.InAMPDU {
		t.Errorf("rx status %+v", st)
	}
	if len(logs[0].got) != 0 {
		t.Errorf("A received %d frames (ACKs must not go up)", len(logs[0].got))
	}
	// The exchange took AIFS + backoff + PPDU + SIFS + ACK.
	p := airtime.FiveGHz()
	ex := p.Exchange(mcs7, len(f)+fcsLen, airtime.NormalAck, false)
	took := int(d.at[0].Sub(t0) / time.Microsecond)
	aifs := p.SIFS + 3*p.Slot
	if took < aifs+ex || took > aifs+15*p.Slot+ex {
		t.Errorf("exchange took %d µs, want %d + backoff", took, aifs+ex)
	}
	if s := rs[1].Stats(); s.AcksSent != 1 {
		t.Errorf("B stats %+v", s)
	}
}

func TestRetriesWalkTheSchedule(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 2}, macA, macB)
	m.SetLoss(rs[0], rs[1], 1)
	d := &doneLog{med: m}
	req := &radio.TxRequest{MPDUs: [][]byte{qosData(macB, macA, 1, []byte("x"), false)}, Key: radio.NoKey, Done: d.done}
	req.Series[0] = radio.Series{Rate: mcs7, Tries: 2}
	req.Series[2] = radio.Series{Rate: airtime.MCS(0, false, false), Tries: 3}
	rs[0].Transmit(req)
	m.Run(50 * time.Millisecond)
	if len(d.st) != 1 || d.st[0].Acked || d.st[0].LongTries != 5 || d.st[0].FinalSeries != 2 || d.st[0].Err != nil {
		t.Fatalf("status %+v", d.st)
	}
	if len(logs[1].got) != 0 {
		t.Fatal("lost frames delivered")
	}
	if s := rs[0].Stats(); s.TxPPDUs != 5 || s.TxRetries != 4 || s.TxFailed != 1 {
		t.Errorf("stats %+v", s)
	}
	// Half the tries get through: the Retry bit is set on the retries.
	m.SetLoss(rs[0], rs[1], 0.6)
	d.st = nil
	n := 0
	for i := 0; i < 100; i++ {
		req := &radio.TxRequest{MPDUs: [][]byte{qosData(macB, macA, uint16(i), []byte("x"), false)}, Key: radio.NoKey, Done: d.done}
		req.Series[0] = radio.Series{Rate: mcs7, Tries: 10}
		if err := rs[0].Transmit(req); err != nil {
			t.Fatal(err)
		}
		n++
	}
	m.Run(time.Second)
	retried := 0
	for _, r := range logs[1].got {
		if r.frame[1]&0x08 != 0 {
			retried++
		}
	}
	acked := 0
	for _, st := range d.st {
		if st.Acked {
			acked++
		}
	}
	if len(d.st) != n || acked < 95 || retried == 0 {
		t.Errorf("done %d acked %d retried %d", len(d.st), acked, retried)
	}
}

func TestGroupFrameNoAck(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 3}, macA, macB, macC)
	d := &doneLog{med: m}
	req := &radio.TxRequest{MPDUs: [][]byte{qosData(wlan.Broadcast, macA, 1, []byte("all"), false)}, Key: radio.NoKey, NoAck: true, Done: d.done}
	req.Series[0] = radio.Series{Rate: airtime.Legacy(6000), Tries: 1}
	rs[0].Transmit(req)
	m.Run(5 * time.Millisecond)
	if len(d.st) != 1 || d.st[0].Acked || d.st[0].LongTries != 1 {
		t.Fatalf("status %+v", d.st)
	}
	if len(logs[1].got) != 1 || len(logs[2].got) != 1 {
		t.Fatalf("got %d %d", len(logs[1].got), len(logs[2].got))
	}
	if rs[1].Stats().AcksSent+rs[2].Stats().AcksSent != 0 {
		t.Error("group frame was acknowledged")
	}
}

func TestBeaconsAtTBTT(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 4}, macA, macB)
	b := wlan.AppendMgmtHeader(nil, wlan.KindBeacon, 0, wlan.Broadcast, macA, macA, 0)
	b = append(b, make([]byte, 12)...) // timestamp, interval, capabilities
	if err := rs[0].SetBeacon(b, 100); err != nil {
		t.Fatal(err)
	}
	m.Run(time.Second + 50*time.Millisecond)
	if len(logs[1].got) != 10 {
		t.Fatalf("%d beacons in 1.05 s", len(logs[1].got))
	}
	pre := uint64(airtime.FiveGHz().TxTime(airtime.Legacy(6000), 0))
	for i, r := range logs[1].got {
		ts := binary.LittleEndian.Uint64(r.frame[wlan.TimestampOffset:])
		tbtt := uint64(i+1) * 100 * 1024
		// PIFS after TBTT on an idle medium, plus the preamble.
		if ts < tbtt || ts > tbtt+pre+100 {
			t.Errorf("beacon %d timestamp %d, TBTT %d", i, ts, tbtt)
		}
	}
	// TSF runs with the medium's clock.
	if tsf := rs[0].TSF(); tsf != uint64(m.Now().Sub(time.Unix(1_800_000_000, 0))/time.Microsecond) {
		t.Errorf("TSF %d", tsf)
	}
	// A new beacon replaces the old one; interval 0 stops.
	b2 := append([]byte(nil), b...)
	b2 = append(b2, 0xdd, 0)
	rs[0].SetBeacon(b2, 100)
	m.Run(110 * time.Millisecond)
	if last := logs[1].got[len(logs[1].got)-1].frame; len(last) != len(b2) {
		t.Errorf("beacon not replaced: %d bytes", len(last))
	}
	rs[0].SetBeacon(nil, 0)
	n := len(logs[1].got)
	m.Run(time.Second)
	if len(logs[1].got) != n {
		t.Error("beacons after interval 0")
	}
}

func TestHardwareCrypto(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 5}, macA, macB)
	tk := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := rs[0].KeyCache().Install(3, macB, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := rs[1].KeyCache().Install(9, macA, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	d := &doneLog{med: m}
	plain := []byte("secret body of the frame")
	f := qosData(macB, macA, 7, plain, true)
	req := &radio.TxRequest{MPDUs: [][]byte{f}, Key: 3, Done: d.done}
	req.Series[0] = radio.Series{Rate: mcs7, Tries: 2}
	rs[0].Transmit(req)
	m.Run(5 * time.Millisecond)
	if len(d.st) != 1 || !d.st[0].Acked {
		t.Fatalf("status %+v", d.st)
	}
	if len(logs[1].got) != 1 {
		t.Fatal("not received")
	}
	got := logs[1].got[0]
	hl := wlan.DataHeaderLen + 2
	if !got.st.Decrypted || got.st.DecryptErr {
		t.Fatalf("status %+v", got.st)
	}
	if got.frame[1]&0x40 == 0 || !bytes.Equal(got.frame[hl+ccmp.HeaderLen:], plain) {
		t.Fatalf("frame %x", got.frame)
	}
	// The CCMP header carries PN 1 (installed as the next PN), key ID 0.
	wantHdr := []byte{1, 0, 0, extIV, 0, 0, 0, 0}
	if !bytes.Equal(got.frame[hl:hl+8], wantHdr) {
		t.Errorf("CCMP header %x", got.frame[hl:hl+8])
	}
	// The radio wrote the PN into the caller's placeholder; a software
	// retransmission of the same MPDU reuses it.
	if !bytes.Equal(f[hl:hl+8], wantHdr) {
		t.Errorf("placeholder %x", f[hl:hl+8])
	}
	rs[0].Transmit(req)
	m.Run(5 * time.Millisecond)
	if g := logs[1].got[1]; !bytes.Equal(g.frame[hl:hl+8], wantHdr) || !g.st.Decrypted {
		t.Errorf("retransmission %x %+v", g.frame[hl:hl+8], g.st)
	}
	// What went over the air is real CCMP: a software key decrypts it
	// (the receiver-side MAC check of the PN is the caller's).
	k, _ := ccmp.NewKey(tk[:], 0)
	air := append([]byte(nil), qosData(macB, macA, 8, plain, true)...)
	air = air[:len(air)-ccmp.Overhead]
	air = append(air[:hl], plain...)
	enc, err := k.EncapPN(append(air, make([]byte, 16)...)[:len(air)], 2)
	if err != nil {
		t.Fatal(err)
	}
	// A frame the receiver's key does not verify goes up flagged.
	enc[len(enc)-1] ^= 1
	var inj rxLog
	rs[1].Start(&inj)
	if err := m.Inject(enc); err != nil {
		t.Fatal(err)
	}
	m.Deliver()
	if len(inj.got) != 1 || !inj.got[0].st.DecryptErr || inj.got[0].st.Decrypted || !bytes.Equal(inj.got[0].frame, enc) {
		t.Fatalf("tampered frame: %+v", inj.got)
	}
	// A frame from a transmitter without a key goes up as received.
	f2 := qosData(macB, macC, 1, plain, true)
	m.Inject(f2)
	m.Deliver()
	if len(inj.got) != 2 || inj.got[1].st.DecryptErr || inj.got[1].st.Decrypted {
		t.Fatalf("unknown transmitter: %+v", inj.got[1].st)
	}
	if s := rs[1].Stats(); s.RxDecrypted != 2 || s.RxDecryptErrors != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestAggregateBlockAck(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 6}, macA, macB)
	m.SetLoss(rs[0], rs[1], 0.3)
	d := &doneLog{med: m}
	var mpdus [][]byte
	for i := 0; i < 20; i++ {
		mpdus = append(mpdus, qosData(macB, macA, uint16(4090+i)%4096, bytes.Repeat([]byte{byte(i)}, 1500), false))
	}
	rate := airtime.MCS(15, true, true)
	for round := 0; round < 20; round++ {
		logs[1].got = nil
		d.st = nil
		req := &radio.TxRequest{MPDUs: mpdus, Key: radio.NoKey, Done: d.done}
		req.Series[0] = radio.Series{Rate: rate, Tries: 4}
		rs[0].Transmit(req)
		m.Run(20 * time.Millisecond)
		if len(d.st) != 1 {
			t.Fatalf("round %d: %d completions", round, len(d.st))
		}
		st := d.st[0]
		// The bitmap is exactly the subframes the receiver got (over
		// every attempt of the exchange).
		var want uint64
		for _, r := range logs[1].got {
			if !r.st.InAMPDU {
				t.Fatal("subframe not marked as in an A-MPDU")
			}
			for i, f := range mpdus {
				if bytes.Equal(f[4:], r.frame[4:]) {
					want |= 1 << i
				}
			}
		}
		if st.Acked && st.BlockAck != want {
			t.Fatalf("round %d: BlockAck %x, receiver got %x", round, st.BlockAck, want)
		}
		if !st.Acked && want != 0 && st.LongTries < 4 {
			t.Fatalf("round %d: %+v", round, st)
		}
	}
	if rs[1].Stats().BlockAcks == 0 {
		t.Error("no BlockAck sent")
	}
}

// Two stations that cannot hear each other collide at the AP; when they
// hear each other, carrier sense keeps collisions rare; hidden, but with
// RTS/CTS, the CTS sets the other's NAV and the long frames get through.
func TestHiddenNodeCollides(t *testing.T) {
	run := func(hidden, rts bool) (collided, acked uint64) {
		m, rs, _ := newRadios(t, Config{Seed: 7}, macA, macB, macC)
		m.SetHidden(rs[1], rs[2], hidden)
		var refill func(r *SimRadio, n *int) func(*radio.TxRequest, *radio.TxStatus)
		refill = func(r *SimRadio, n *int) func(*radio.TxRequest, *radio.TxStatus) {
			return func(req *radio.TxRequest, st *radio.TxStatus) {
				*n++
				if *n < 300 {
					r.Transmit(req)
				}
			}
		}
		var nb, nc int
		for i, r := range []*SimRadio{rs[1], rs[2]} {
			n := &nb
			if i == 1 {
				n = &nc
			}
			req := &radio.TxRequest{MPDUs: [][]byte{qosData(macA, r.addr, 1, make([]byte, 1500), false)}, Key: radio.NoKey, Done: refill(r, n)}
			req.Series[0] = radio.Series{Rate: airtime.MCS(0, false, false), Tries: 7}
			req.RTS = rts
			r.Transmit(req)
		}
		m.Run(2 * time.Second)
		s := rs[0].Stats()
		return s.RxCollided, rs[1].Stats().TxAcked + rs[2].Stats().TxAcked
	}
	hc, ha := run(true, false)
	vc, va := run(false, false)
	rc, ra := run(true, true)
	t.Logf("hidden: %d collisions, %d acked; visible: %d collisions, %d acked; hidden with RTS: %d collisions, %d acked", hc, ha, vc, va, rc, ra)
	if hc < 5*(vc+1) || ha >= va {
		t.Errorf("hidden %d/%d, visible %d/%d", hc, ha, vc, va)
	}
	if ra < 2*ha {
		t.Errorf("RTS/CTS did not help: %d acked, %d without", ra, ha)
	}
}

func TestRTSWithoutCTS(t *testing.T) {
	m, rs, logs := newRadios(t, Config{Seed: 12}, macA, macB)
	m.SetLoss(rs[0], rs[1], 1)
	d := &doneLog{med: m}
	req := &radio.TxRequest{MPDUs: [][]byte{qosData(macB, macA, 1, []byte("x"), false)}, Key: radio.NoKey, RTS: true, Done: d.done}
	req.Series[0] = radio.Series{Rate: mcs7, Tries: 4}
	rs[0].Transmit(req)
	m.Run(100 * time.Millisecond)
	if len(d.st) != 1 || d.st[0].Acked || d.st[0].ShortTries != shortRetryLimit || d.st[0].LongTries != 0 {
		t.Fatalf("%+v", d.st)
	}
	m.SetLoss(rs[0], rs[1], 0)
	d.st = nil
	rs[0].Transmit(req)
	m.Run(10 * time.Millisecond)
	if len(d.st) != 1 || !d.st[0].Acked || d.st[0].ShortTries != 0 || d.st[0].LongTries != 1 || rs[1].Stats().CTSSent != 1 {
		t.Fatalf("%+v %+v", d.st, rs[1].Stats())
	}
	if len(logs[1].got) != 1 {
		t.Fatal("RTS or CTS handed up as data")
	}
}

func TestStopFlushes(t *testing.T) {
	m, rs, _ := newRadios(t, Config{Seed: 8}, macA, macB)
	d := &doneLog{med: m}
	for i := 0; i < 3; i++ {
		req := &radio.TxRequest{MPDUs: [][]byte{qosData(macB, macA, 1, nil, false)}, Key: radio.NoKey, Done: d.done}
		req.Series[0] = radio.Series{Rate: mcs7, Tries: 1}
		rs[0].Transmit(req)
	}
	rs[0].Stop()
	if len(d.st) != 3 || d.st[0].Err != radio.ErrStopped {
		t.Fatalf("%+v", d.st)
	}
	req := &radio.TxRequest{MPDUs: [][]byte{qosData(macB, macA, 1, nil, false)}, Key: radio.NoKey}
	req.Series[0] = radio.Series{Rate: mcs7, Tries: 1}
	if err := rs[0].Transmit(req); err != radio.ErrStopped {
		t.Fatal(err)
	}
	bad := *req
	bad.Series[0].Tries = 0
	rs[0].Start(&rxLog{})
	if err := rs[0].Transmit(&bad); err != ErrBadRequest {
		t.Fatal(err)
	}
	bad = *req
	bad.Series[1] = radio.Series{Rate: airtime.Rate{Mod: airtime.HT, MCS: 40}, Tries: 1}
	if err := rs[0].Transmit(&bad); err != ErrBadRequest {
		t.Fatal(err)
	}
	// A 40 MHz rate on a 20 MHz channel.
	rs[0].SetChannel(radio.Channel{Number: 36, Band5G: true})
	bad = *req
	bad.Series[0].Rate = airtime.MCS(7, true, false)
	if err := rs[0].Transmit(&bad); err != ErrBadRequest {
		t.Fatal(err)
	}
}

var _ radio.Radio = (*SimRadio)(nil)

type tickCount struct {
	n    int
	last time.Time
}

func (c *tickCount) Tick(now time.Time) { c.n++; c.last = now }

func TestTicker(t *testing.T) {
	m, _, _ := newRadios(t, Config{Step: 10 * time.Millisecond}, macA)
	var c tickCount
	m.AddTicker(&c)
	m.Run(100 * time.Millisecond)
	if c.n != 10 || !c.last.Equal(m.Now()) {
		t.Fatalf("%d ticks, last %v, now %v", c.n, c.last, m.Now())
	}
}
