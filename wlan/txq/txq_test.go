package txq

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
)

// fakeRadio queues requests; the test completes them with the BlockAck
// it chooses.
type fakeRadio struct {
	reqs []*radio.TxRequest
	full bool
	st   radio.TxStatus
}

func (f *fakeRadio) Address() [6]byte               { return apMAC }
func (f *fakeRadio) Start(radio.Receiver) error     { return nil }
func (f *fakeRadio) SetChannel(radio.Channel) error { return nil }
func (f *fakeRadio) SetBeacon([]byte, uint16) error { return nil }
func (f *fakeRadio) TSF() uint64                    { return 0 }
func (f *fakeRadio) KeyCache() radio.KeyCache       { return nil }
func (f *fakeRadio) Stop()                          {}
func (f *fakeRadio) Transmit(r *radio.TxRequest) error {
	if f.full {
		return radio.ErrQueueFull
	}
	f.reqs = append(f.reqs, r)
	return nil
}

// completeEvery finishes the oldest request acknowledging the MPDUs
// whose sequence number plus k is not a multiple of 5 (no allocation).
func (f *fakeRadio) completeEvery(k int) {
	r := f.reqs[0]
	copy(f.reqs, f.reqs[1:])
	f.reqs = f.reqs[:len(f.reqs)-1]
	st := &f.st
	*st = radio.TxStatus{}
	for i, m := range r.MPDUs {
		if (int(binary.LittleEndian.Uint16(m[22:])>>4)+k)%5 != 0 {
			st.BlockAck |= 1 << i
		}
	}
	st.Acked = st.BlockAck != 0
	st.LongTries = 1
	r.Done(r, st)
}

// complete finishes the oldest request: acked selects the MPDUs the
// BlockAck acknowledges (by sequence number).
func (f *fakeRadio) complete(acked func(seq uint16) bool) (seqs []uint16, st radio.TxStatus) {
	r := f.reqs[0]
	f.reqs = f.reqs[1:]
	for i, m := range r.MPDUs {
		if len(m) < 24 { // a BlockAckReq
			st.BlockAck |= 1 << i
			continue
		}
		seq := binary.LittleEndian.Uint16(m[22:]) >> 4
		seqs = append(seqs, seq)
		if acked(seq) {
			st.BlockAck |= 1 << i
		}
	}
	st.Acked = st.BlockAck != 0
	st.LongTries = 1
	r.Done(r, &st)
	return seqs, st
}

type clock struct{ t time.Duration }

func (c *clock) now() time.Duration { return c.t }

func newSched(t testing.TB, retries int) (*Scheduler, *fakeRadio, *Station, *clock) {
	fr := &fakeRadio{reqs: make([]*radio.TxRequest, 0, 64)}
	c := &clock{}
	s, err := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, SoftRetries: retries, Buffers: 600})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: htCaps, Key: radio.NoKey})
	if err != nil {
		t.Fatal(err)
	}
	return s, fr, st, c
}

func enqueueN(t testing.TB, s *Scheduler, st *Station, n, size int) {
	p := make([]byte, size)
	for i := 0; i < n; i++ {
		if err := s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, p); err != nil {
			t.Fatal(err)
		}
	}
}

// The frames: QoS data FromDS, DA the station, BSSID, SA; sequence
// numbers in order; LLC/SNAP with the EtherType.
func TestFrameLayout(t *testing.T) {
	s, fr, st, _ := newSched(t, 3)
	s.Enqueue(st, 5, st.Addr(), lanSA, 0x0806, []byte{1, 2, 3})
	if len(fr.reqs) != 1 {
		t.Fatal("nothing sent")
	}
	r := fr.reqs[0]
	h, err := wlan.ParseHeader(r.MPDUs[0])
	if err != nil {
		t.Fatal(err)
	}
	if h.FC.Kind() != wlan.KindQoSData || !h.FC.FromDS() || h.FC.ToDS() || h.Addr1 != st.Addr() || h.Addr2 != apMAC || h.Addr3 != lanSA || h.QoS.TID() != 5 || h.Seq.Seq() != 0 {
		t.Fatalf("header %+v", h)
	}
	et, p, err := wlan.ParseMSDU(r.MPDUs[0][h.Len:])
	if err != nil || et != 0x0806 || string(p) != "\x01\x02\x03" {
		t.Fatalf("body %x %x %v", et, p, err)
	}
	if r.Queue != 2 || r.Key != radio.NoKey || r.NoAck {
		t.Fatalf("request %+v", r)
	}
}

// Unacknowledged subframes go out again, in sequence order, in later
// aggregates, never past the 64-frame window from the oldest one, and
// are dropped after SoftRetries with a BlockAckReq moving the window.
func TestRetransmitWindowAndBAR(t *testing.T) {
	s, fr, st, _ := newSched(t, 3)
	fr.full = true
	enqueueN(t, s, st, 200, 100)
	fr.full = false
	s.Kick()
	// Seq 2 never gets through; everything else does.
	var sent [][]uint16
	for i := 0; i < 4; i++ {
		seqs, _ := fr.complete(func(seq uint16) bool { return seq != 2 })
		sent = append(sent, seqs)
		if seqs[0] != 2 && i > 0 {
			t.Fatalf("aggregate %d starts at %d, not the retried 2", i, seqs[0])
		}
		for _, q := range seqs {
			if i > 0 && wlan.SeqSub(q, 2) >= Window {
				t.Fatalf("aggregate %d: seq %d outside the window starting at 2", i, q)
			}
		}
	}
	// Seq 2 was sent 4 times (3 retries): dropped, and it was the window
	// start, so the next request is a BAR to 3... or the first still
	// outstanding frame.
	stt := s.Stats(st)
	if stt.Dropped != 1 || stt.Retries != 4 {
		t.Fatalf("stats %+v", stt)
	}
	bar := fr.reqs[0]
	if k := wlan.FrameControl(binary.LittleEndian.Uint16(bar.MPDUs[0])).Kind(); k != wlan.KindBlockAckReq {
		t.Fatalf("kind %v after the drop", k)
	}
	b, err := wlan.ParseBlockAckReq(bar.MPDUs[0][wlan.CtrlHeaderLen:])
	if err != nil || b.TID != 0 {
		t.Fatal(err)
	}
	// Every frame before the first outstanding is done.
	var maxSent uint16
	for _, seqs := range sent {
		for _, q := range seqs {
			if q > maxSent {
				maxSent = q
			}
		}
	}
	if b.StartSeq != maxSent+1 {
		t.Errorf("BAR SSN %d, want %d", b.StartSeq, maxSent+1)
	}
	fr.complete(func(uint16) bool { return true })
	seqs, _ := fr.complete(func(uint16) bool { return true })
	if seqs[0] != b.StartSeq {
		t.Errorf("after the BAR the aggregate starts at %d", seqs[0])
	}
	if stt := s.Stats(st); stt.BARs != 1 {
		t.Errorf("BARs %d", stt.BARs)
	}
}

// Aggregates are formed for the rate of series 0: within 4 ms at it,
// the peer's maximum and 64 frames; series that could not carry the
// aggregate have no tries. Repeated failures make rate control step
// down and the aggregates shrink.
func TestAggregateFitsRate(t *testing.T) {
	s, fr, st, c := newSched(t, 100)
	enqueueN(t, s, st, 250, 1500)
	tab := st.Table()
	p := airtime.FiveGHz()
	var first, last airtime.Rate
	for i := 0; i < 60; i++ {
		r := fr.reqs[0]
		psdu := 0
		for j, m := range r.MPDUs {
			psdu += agg.SubframeLen(len(m)+4, 0, j == len(r.MPDUs)-1)
		}
		if len(r.MPDUs) > 1 {
			for k, se := range r.Series {
				if se.Tries > 0 && psdu > agg.ForRate(p, se.Rate, agg.DefaultLimitUs) {
					t.Fatalf("exchange %d: %d bytes at series %d %v beyond 4 ms", i, psdu, k, se.Rate)
				}
			}
		}
		if len(r.MPDUs) > Window || psdu > tab.MaxAMPDU {
			t.Fatalf("exchange %d: %d frames, %d bytes", i, len(r.MPDUs), psdu)
		}
		if i == 0 {
			first = r.Series[0].Rate
		}
		last = r.Series[0].Rate
		c.t += 5 * time.Millisecond
		// Only the first 4 subframes get through: rates whose
		// aggregates are long lose most of them.
		n := 0
		fr.complete(func(uint16) bool { n++; return n <= 4 })
		if len(fr.reqs) == 0 {
			enqueueN(t, s, st, 10, 1500)
		}
	}
	t.Logf("first %v, last %v", first, last)
	if last.KbpsNominal() >= first.KbpsNominal() {
		t.Errorf("rate did not drop: %v -> %v", first, last)
	}
}

func TestProtectedFrames(t *testing.T) {
	fr := &fakeRadio{}
	c := &clock{}
	s, _ := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now})
	st, _ := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: htCaps, Key: 7})
	s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, []byte("payload"))
	r := fr.reqs[0]
	m := r.MPDUs[0]
	if r.Key != 7 || m[1]&0x40 == 0 || len(m) != 26+ccmp.HeaderLen+8+7+ccmp.MICLen {
		t.Fatalf("key %d frame %x", r.Key, m)
	}
	fr.complete(func(uint16) bool { return true })
	if s.Stats(st).PayloadAck != 7 {
		t.Errorf("payload bytes %d", s.Stats(st).PayloadAck)
	}
}

func TestQueueLimitsAndRemove(t *testing.T) {
	s, fr, st, _ := newSched(t, 3)
	p := make([]byte, 10)
	n := 0
	for s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, p) == nil {
		n++
	}
	if n != ringLen || s.Stats(st).QueueFull != 1 {
		t.Fatalf("queued %d", n)
	}
	if err := s.Enqueue(st, 8, st.Addr(), lanSA, 0x0800, p); err != ErrTID {
		t.Fatal(err)
	}
	if err := s.Enqueue(st, 1, st.Addr(), lanSA, 0x0800, make([]byte, MaxMSDU+1)); err != ErrTooLong {
		t.Fatal(err)
	}
	free := len(s.free)
	s.RemoveStation(st)
	fr.complete(func(uint16) bool { return true })
	if len(s.free) != 600 || free >= 600 {
		t.Fatalf("buffers back: %d of 600 (was %d)", len(s.free), free)
	}
	if err := s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, p); err != ErrStation {
		t.Fatal(err)
	}
}

// Enqueueing, forming, completing and retrying allocate nothing.
func TestZeroAllocs(t *testing.T) {
	s, fr, st, _ := newSched(t, 2)
	p := make([]byte, 1500)
	k := 0
	allocs := testing.AllocsPerRun(200, func() {
		for i := 0; i < 8; i++ {
			s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, p)
		}
		for len(fr.reqs) > 0 {
			k++
			fr.completeEvery(k)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocs per round", allocs)
	}
}

func BenchmarkEnqueueComplete(b *testing.B) {
	s, fr, st, _ := newSched(b, 2)
	p := make([]byte, 1500)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, p)
		if len(fr.reqs) > 0 && i%32 == 31 {
			fr.completeEvery(i)
		}
	}
}

// MSDUs queued while the radio is busy are packed into A-MSDUs: QoS
// A-MSDU Present, Address 3 the BSSID, each subframe with DA and SA, as
// many as the TXOP plan allows under the A-MSDU limit.
func TestAMSDUPacking(t *testing.T) {
	for _, key := range []int{radio.NoKey, 3} {
		fr := &fakeRadio{full: true}
		c := &clock{}
		s, err := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, AMSDU: true})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: htCaps, Key: key})
		sizes := []int{100, 200, 1500, 1500, 1500, 1500}
		for i, n := range sizes {
			p := make([]byte, n)
			p[0] = byte(i)
			if err := s.Enqueue(st, 0, st.Addr(), wlan.MAC{2, 0xe, 0, 0, 0, byte(i)}, 0x0800, p); err != nil {
				t.Fatal(err)
			}
		}
		fr.full = false
		s.Kick()
		r := fr.reqs[0]
		// 100+200+1500+1500 fit 3839 with subframe headers, LLC/SNAP
		// and padding (3394 bytes); the next 1500 does not: it starts
		// the next A-MSDU.
		if len(r.MPDUs) != 2 {
			t.Fatalf("key %d: %d MPDUs", key, len(r.MPDUs))
		}
		want := [][]int{{0, 1, 2, 3}, {4, 5}}
		for i, m := range r.MPDUs {
			h, err := wlan.ParseHeader(m)
			if err != nil || !h.QoS.AMSDU() || h.Addr3 != apMAC || h.Seq.Seq() != uint16(i) {
				t.Fatalf("MPDU %d: %+v %v", i, h, err)
			}
			body := m[h.Len:]
			if key != radio.NoKey {
				if !h.FC.Protected() {
					t.Fatal("not protected")
				}
				body = body[ccmp.HeaderLen : len(body)-ccmp.MICLen]
			}
			rd := wlan.NewAMSDUReader(body)
			var got []int
			for {
				sub, ok := rd.Next()
				if !ok {
					break
				}
				_, p, err := wlan.ParseMSDU(sub.MSDU)
				if err != nil || sub.DA != st.Addr() || sub.SA[5] != p[0] || len(p) != sizes[p[0]] {
					t.Fatalf("subframe %+v: %v", sub, err)
				}
				got = append(got, int(p[0]))
			}
			if rd.Err() != nil || len(got) != len(want[i]) {
				t.Fatalf("MPDU %d: subframes %v, %v", i, got, rd.Err())
			}
		}
		fr.complete(func(uint16) bool { return true })
		if st := s.Stats(st); st.PayloadAck != 6300 || st.AMSDUPacked != 4 || st.Enqueued != 6 {
			t.Errorf("stats %+v", st)
		}
	}
}

var _ = rate.MaxRates

// The TXOP limit bounds the A-MSDU: at MCS 0 (a peer with no other
// rate), 1500 bytes take 924 µs: nothing joins them in a 500 µs TXOP;
// two 100-byte MSDUs fit.
func TestAMSDUWithinTXOP(t *testing.T) {
	fr := &fakeRadio{full: true}
	c := &clock{}
	s, _ := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, AMSDU: true, TXOPLimitUs: 500})
	mcs0 := htCaps
	mcs0.MCS = 1
	st, _ := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: mcs0, Key: radio.NoKey})
	for _, n := range []int{1500, 1500, 100, 100} {
		s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, make([]byte, n))
	}
	if got := s.Stats(st).AMSDUPacked; got != 1 {
		t.Fatalf("%d packed, want 1 (the second 100-byte MSDU)", got)
	}
}

func TestZeroAllocsAMSDU(t *testing.T) {
	fr := &fakeRadio{reqs: make([]*radio.TxRequest, 0, 64)}
	c := &clock{}
	s, _ := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, AMSDU: true, SoftRetries: 2, Buffers: 600})
	st, _ := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: htCaps, Key: 4})
	p := make([]byte, 300)
	k := 0
	allocs := testing.AllocsPerRun(200, func() {
		for i := 0; i < 8; i++ {
			s.Enqueue(st, 0, st.Addr(), lanSA, 0x0800, p)
		}
		for len(fr.reqs) > 0 {
			k++
			fr.completeEvery(k)
		}
	})
	if allocs != 0 || s.Stats(st).AMSDUPacked == 0 {
		t.Fatalf("%.1f allocs per round, %d packed", allocs, s.Stats(st).AMSDUPacked)
	}
}

// Addresses per 802.11-2016 Table 9-26 for a 4-address peer and for a
// station sending to its AP; 3-address peers refuse what they cannot
// express.
func TestAddressModes(t *testing.T) {
	lanDA := wlan.MAC{2, 0xd, 0, 0, 0, 9}
	fr := &fakeRadio{}
	c := &clock{}
	s, _ := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, AMSDU: true})
	wds, _ := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: htCaps, Key: radio.NoKey, FourAddr: true})
	if err := s.Enqueue(wds, 0, lanDA, lanSA, 0x0800, []byte("wds")); err != nil {
		t.Fatal(err)
	}
	h, _ := wlan.ParseHeader(fr.reqs[0].MPDUs[0])
	if !h.FC.ToDS() || !h.FC.FromDS() || h.Len != 32 || h.Addr1 != staMAC || h.Addr2 != apMAC || h.Addr3 != lanDA || h.Addr4 != lanSA {
		t.Fatalf("4-address header %+v", h)
	}
	if _, p, err := wlan.ParseMSDU(fr.reqs[0].MPDUs[0][h.Len:]); err != nil || string(p) != "wds" {
		t.Fatal(err)
	}
	// Two more behind the one in flight: an A-MSDU with Address 3 and 4
	// the BSSID, DA/SA in the subframes.
	s.Enqueue(wds, 0, lanDA, lanSA, 0x0800, []byte("one"))
	s.Enqueue(wds, 0, lanSA, lanDA, 0x0800, []byte("two"))
	fr.complete(func(uint16) bool { return true })
	m := fr.reqs[0].MPDUs[0]
	h, _ = wlan.ParseHeader(m)
	if !h.QoS.AMSDU() || h.Addr3 != apMAC || h.Addr4 != apMAC {
		t.Fatalf("4-address A-MSDU header %+v", h)
	}
	rd := wlan.NewAMSDUReader(m[h.Len:])
	a, _ := rd.Next()
	b, _ := rd.Next()
	if a.DA != lanDA || a.SA != lanSA || b.DA != lanSA || b.SA != lanDA {
		t.Fatalf("subframes %+v %+v", a, b)
	}
	fr.complete(func(uint16) bool { return true })

	// A 3-address station of this AP: DA must be the station.
	plain, _ := s.AddStation(StationConfig{BAWindow: 64, Addr: wlan.MAC{2, 5, 0, 0, 0, 2}, Caps: htCaps, Key: radio.NoKey})
	if err := s.Enqueue(plain, 0, lanDA, lanSA, 0x0800, nil); err != ErrAddr {
		t.Fatal(err)
	}

	// A station's scheduler: ToDS to the AP, Address 3 the DA; SA must
	// be the station itself.
	fs := &fakeRadio{}
	ss, _ := New(Config{Radio: fs, Own: staMAC, Station: true, Caps: htCaps, Now: c.now})
	toAP, _ := ss.AddStation(StationConfig{BAWindow: 64, Addr: apMAC, Caps: htCaps, Key: radio.NoKey})
	if err := ss.Enqueue(toAP, 0, lanDA, staMAC, 0x0800, []byte("up")); err != nil {
		t.Fatal(err)
	}
	h, _ = wlan.ParseHeader(fs.reqs[0].MPDUs[0])
	if !h.FC.ToDS() || h.FC.FromDS() || h.Addr1 != apMAC || h.Addr2 != staMAC || h.Addr3 != lanDA {
		t.Fatalf("station header %+v", h)
	}
	if err := ss.Enqueue(toAP, 0, lanDA, lanSA, 0x0800, nil); err != ErrAddr {
		t.Fatal(err)
	}
}

// A-MPDUs only under an agreement, never wider than its window.
func TestBAWindow(t *testing.T) {
	fr := &fakeRadio{full: true}
	c := &clock{}
	s, _ := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, SoftRetries: 1})
	st, err := s.AddStation(StationConfig{Addr: staMAC, Caps: htCaps, Key: radio.NoKey})
	if err != nil {
		t.Fatal(err)
	}
	enqueueN(t, s, st, 40, 200)
	fr.full = false
	s.Kick()
	// No agreement: one at a time; a frame lost twice is dropped, no BAR.
	for i := 0; i < 3; i++ {
		if n := len(fr.reqs[0].MPDUs); n != 1 {
			t.Fatalf("without an agreement: %d MPDUs", n)
		}
		fr.complete(func(seq uint16) bool { return seq != 0 })
	}
	if st := s.Stats(st); st.Dropped != 1 || st.BARs != 0 {
		t.Fatalf("stats %+v", st)
	}
	if err := s.SetBAWindow(st, 0, 65); err != ErrWindow {
		t.Fatal(err)
	}
	s.SetBAWindow(st, 0, 8)
	fr.complete(func(uint16) bool { return true }) // the single in flight
	seqs, _ := fr.complete(func(seq uint16) bool { return seq%2 == 0 })
	if len(seqs) != 8 {
		t.Fatalf("window 8: %d MPDUs", len(seqs))
	}
	// Holes at odd numbers: the next aggregate stays within 8 of the
	// oldest outstanding.
	seqs, _ = fr.complete(func(uint16) bool { return true })
	for _, q := range seqs {
		if wlan.SeqSub(q, seqs[0]) >= 8 {
			t.Fatalf("seq %d beyond the window from %d", q, seqs[0])
		}
	}
}

// A BlockAckReq nobody acknowledges is given up after maxBARTries; data
// flows again.
func TestBARGivesUp(t *testing.T) {
	s, fr, st, _ := newSched(t, 1)
	enqueueN(t, s, st, 3, 100)
	// Seq 0 fails twice: dropped, the BAR follows.
	for i := 0; i < 10 && s.Stats(st).BARs == 0; i++ {
		fr.complete(func(seq uint16) bool { return seq != 0 })
	}
	enqueueN(t, s, st, 1, 100)
	for i := 0; i < maxBARTries; i++ {
		if k := wlan.FrameControl(binary.LittleEndian.Uint16(fr.reqs[0].MPDUs[0])).Kind(); k != wlan.KindBlockAckReq {
			t.Fatalf("try %d: %v", i, k)
		}
		r := fr.reqs[0]
		fr.reqs = fr.reqs[1:]
		r.Done(r, &radio.TxStatus{LongTries: 4})
	}
	if k := wlan.FrameControl(binary.LittleEndian.Uint16(fr.reqs[0].MPDUs[0])).Kind(); k != wlan.KindQoSData {
		t.Fatalf("after giving up: %v", k)
	}
	if s := s.Stats(st); s.BARFailed != 1 || s.BARs != maxBARTries {
		t.Fatalf("%+v", s)
	}
}
