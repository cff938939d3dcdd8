package txq

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ba"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
	"github.com/gowrt/gowrt/wlan/reorder"
)

// sendAction transmits a Block Ack action frame body from r to da.
func sendAction(t *testing.T, r radio.Radio, da, bssid wlan.MAC, body []byte) {
	t.Helper()
	f := wlan.AppendMgmtHeader(nil, wlan.KindAction, 0, da, wlan.MAC(r.Address()), bssid, 0)
	f = append(f, body...)
	req := &radio.TxRequest{MPDUs: [][]byte{f}, Key: radio.NoKey, Queue: 3}
	req.Series[0] = radio.Series{Rate: airtime.Legacy(6000), Tries: 8}
	if err := r.Transmit(req); err != nil {
		t.Fatal(err)
	}
}

// apSide receives the station's ADDBA Response and opens the window.
type apSide struct {
	t    *testing.T
	peer ba.Peer[int]
	s    *Scheduler
	st   *Station
	now  func() time.Time
}

func (a *apSide) Receive(f []byte, _ *radio.RxStatus) {
	h, err := wlan.ParseHeader(f)
	if err != nil || h.FC.Kind() != wlan.KindAction {
		return
	}
	if _, err := a.peer.HandleAction(nil, f[h.Len:], a.now()); err != nil {
		a.t.Errorf("AP: %v", err)
	}
	if o := a.peer.Orig[0]; o.State() == ba.Established {
		a.s.SetBAWindow(a.st, 0, int(o.BufSize()))
	}
}

// staSide is a station's receive path: ADDBA answered over the air,
// BlockAckReqs move the reorder window, data goes through the reorder
// buffer, MSDUs come out in order.
type staSide struct {
	t         *testing.T
	radio     radio.Radio
	peer      ba.Peer[uint64]
	dup       reorder.DupFilter
	delivered []uint64
	dups      uint64
	now       func() time.Time
}

func (s *staSide) Receive(f []byte, st *radio.RxStatus) {
	h, err := wlan.ParseHeader(f)
	if err != nil {
		return
	}
	now := s.now()
	r := s.peer.Recip[0]
	switch {
	case h.FC.Kind() == wlan.KindAction:
		out, err := s.peer.HandleAction(nil, f[h.Len:], now)
		if err != nil {
			s.t.Errorf("station: %v", err)
		}
		if len(out) > 0 {
			sendAction(s.t, s.radio, h.Addr2, h.Addr2, out)
		}
	case h.FC.Kind() == wlan.KindBlockAckReq:
		bar, err := wlan.ParseBlockAckReq(f[h.Len:])
		if err == nil && r.HandleBAR(bar.StartSeq, now) {
			s.drain()
		}
	case h.FC.IsQoSData():
		if s.dup.Check(h.QoS.TID(), h.Seq, h.FC.Retry()) {
			s.dups++
			return
		}
		_, p, err := wlan.ParseMSDU(f[h.Len:])
		if err != nil {
			return
		}
		id := binary.BigEndian.Uint64(p)
		if r.State() != ba.Established {
			s.delivered = append(s.delivered, id)
			return
		}
		r.Activity(now)
		r.Reorder().Add(h.Seq.Seq(), id, now)
		s.drain()
	}
}

func (s *staSide) drain() {
	for {
		id, ok := s.peer.Recip[0].Reorder().Pop()
		if !ok {
			return
		}
		s.delivered = append(s.delivered, id)
	}
}

// The pieces together over the air: ADDBA negotiated with action frames
// between wlan/ba on both sides, the AP's txq aggregating within the
// agreed window over a lossy link, the station's reorder buffer
// delivering every MSDU once and in order, and BlockAckReqs moving it
// past frames the AP gave up on.
func TestBlockAckSessionOverTheAir(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	m, _ := medium.New(medium.Config{Start: start, Seed: 5})
	apR, _ := m.NewRadio(medium.RadioConfig{Addr: apMAC, Channel: ht40})
	staR, _ := m.NewRadio(medium.RadioConfig{Addr: staMAC, Channel: ht40})
	m.SetLoss(apR, staR, 0.3)
	now := func() time.Time { return m.Now() }
	s, err := New(Config{Radio: apR, Own: apMAC, Caps: htCaps, SoftRetries: 2,
		Now: func() time.Duration { return m.Now().Sub(start) }})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := s.AddStation(StationConfig{Addr: staMAC, Caps: htCaps, Key: radio.NoKey})
	ap := &apSide{t: t, s: s, st: st, now: now}
	ap.peer.Orig[0], _ = ba.NewOriginator(0, 32, 0, false)
	sta := &staSide{t: t, radio: staR, now: now}
	sta.peer.Recip[0], _ = ba.NewRecipient[uint64](0, 64, 128, 50*time.Millisecond, false)
	apR.Start(ap)
	staR.Start(sta)

	req, err := ap.peer.Orig[0].Start(nil, 0, now())
	if err != nil {
		t.Fatal(err)
	}
	sendAction(t, apR, staMAC, apMAC, req)
	m.Run(10 * time.Millisecond)
	if ap.peer.Orig[0].State() != ba.Established || ap.peer.Orig[0].BufSize() != 32 {
		t.Fatalf("agreement: %v, %d", ap.peer.Orig[0].State(), ap.peer.Orig[0].BufSize())
	}

	payload := make([]byte, 1000)
	const total = 3000
	var id uint64
	for i := 0; i < 400 && id < total; i++ {
		for id < total {
			binary.BigEndian.PutUint64(payload, id)
			if s.Enqueue(st, 0, staMAC, lanSA, 0x0800, payload) != nil {
				break
			}
			id++
		}
		m.Run(time.Millisecond)
	}
	m.Run(200 * time.Millisecond)
	for i := 0; i < 10; i++ { // let the reorder timeout release the last holes
		sta.peer.Recip[0].Tick(nil, now())
		sta.drain()
		m.Run(20 * time.Millisecond)
	}
	stats := s.Stats(st)
	t.Logf("sent %d, delivered %d, dropped %d, retries %d, BARs %d, duplicates filtered %d, aggregates %d (%.1f subframes)",
		id, len(sta.delivered), stats.Dropped, stats.Retries, stats.BARs, sta.dups, stats.Exchanges, float64(stats.Subframes)/float64(stats.Exchanges))
	for i := 1; i < len(sta.delivered); i++ {
		if sta.delivered[i] <= sta.delivered[i-1] {
			t.Fatalf("out of order at %d: %d after %d", i, sta.delivered[i], sta.delivered[i-1])
		}
	}
	if got, want := uint64(len(sta.delivered)), id-stats.Dropped; got < want || got > id {
		t.Errorf("delivered %d, want %d..%d", got, want, id)
	}
	if stats.Dropped == 0 || stats.BARs == 0 || stats.Retries == 0 {
		t.Errorf("the lossy link exercised nothing: %+v", stats)
	}
	if stats.Subframes/stats.Exchanges > 32 {
		t.Error("aggregates wider than the window")
	}
}
