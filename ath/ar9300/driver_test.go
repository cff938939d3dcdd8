package ar9300_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/ar9300/ar9300sim"
	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
)

func TestTransmitSingle(t *testing.T) {
	r := newRig(t, rigOpts{seed: 1})
	f := r.dmaFrame(qosData(peerMAC, apMAC, 7, payload(300, 1), false))
	want := append([]byte(nil), f...)
	var dn done
	req := &radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(2, 2), Key: radio.NoKey, Done: dn.fn}
	if err := r.drv.Transmit(req); err != nil {
		t.Fatal(err)
	}
	r.settle()
	if dn.n != 1 || !dn.st[0].Acked || dn.st[0].BlockAck != 1 || dn.st[0].Err != nil {
		t.Fatalf("done %d %+v", dn.n, dn.st)
	}
	if len(r.air.frames) != 1 {
		t.Fatalf("%d frames on the air", len(r.air.frames))
	}
	expectEqual(t, "frame on the air", r.air.frames[0], want)
}

// TestRetrySchedule: the receiver answers only the 4th attempt, the first
// try of series 1 after two of series 0... the status says where it ended.
func TestRetrySchedule(t *testing.T) {
	r := newRig(t, rigOpts{seed: 2})
	attempts := 0
	r.mac.SetOutcome(func(_ []byte, s, try int) bool { attempts++; return attempts == 4 })
	var dn done
	f := r.dmaFrame(qosData(peerMAC, apMAC, 9, payload(100, 2), false))
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(2, 3, 1), Key: radio.NoKey, Done: dn.fn}); err != nil {
		t.Fatal(err)
	}
	r.settle()
	st := dn.st[0]
	if !st.Acked || st.FinalSeries != 1 || st.LongTries != 4 {
		t.Fatalf("status %+v", st)
	}
	// Never answered: excessive retries, not acked, all 6 tries used.
	r.mac.SetOutcome(func([]byte, int, int) bool { return false })
	f2 := r.dmaFrame(qosData(peerMAC, apMAC, 10, payload(100, 3), false))
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f2}, Series: sched(2, 3, 1), Key: radio.NoKey, Done: dn.fn}); err != nil {
		t.Fatal(err)
	}
	r.settle()
	st = dn.st[1]
	if st.Acked || st.FinalSeries != 2 || st.LongTries != 6 || len(r.air.frames) != 4+6 {
		t.Fatalf("status %+v, %d on air", st, len(r.air.frames))
	}
}

// TestAggregateBlockAck: five MPDUs in one A-MPDU; the receiver misses
// the third; the BlockAck bitmap comes back in request order.
func TestAggregateBlockAck(t *testing.T) {
	r := newRig(t, rigOpts{seed: 3})
	r.mac.SetOutcome(func(f []byte, _, _ int) bool { return binary.LittleEndian.Uint16(f[22:])>>4 != 4094 })
	var mpdus [][]byte
	for i := 0; i < 5; i++ { // sequence numbers wrap: 4092 .. 0
		mpdus = append(mpdus, r.dmaFrame(qosData(peerMAC, apMAC, uint16(4092+i)&0xfff, payload(200+i, byte(i)), false)))
	}
	var dn done
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: mpdus, Series: sched(3), Key: radio.NoKey, Done: dn.fn}); err != nil {
		t.Fatal(err)
	}
	r.settle()
	if dn.n != 1 {
		t.Fatalf("%d completions", dn.n)
	}
	if st := dn.st[0]; !st.Acked || st.BlockAck != 0b11011 {
		t.Fatalf("status %+v", st)
	}
	for i, f := range r.air.frames {
		expectEqual(t, "subframe", f, mpdus[i])
	}
}

func TestQueueFullAndStop(t *testing.T) {
	r := newRig(t, rigOpts{seed: 4})
	var dn done
	n := 0
	for ; n < 20; n++ {
		f := r.dmaFrame(qosData(peerMAC, apMAC, uint16(n), payload(64, byte(n)), false))
		err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(1), Key: radio.NoKey, Done: dn.fn})
		if err == radio.ErrQueueFull {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != 8 {
		t.Fatalf("queue took %d chains, want the FIFO depth 8", n)
	}
	r.drv.Stop()
	if dn.n != 8 {
		t.Fatalf("%d of 8 completed after Stop", dn.n)
	}
	for _, st := range dn.st {
		if st.Acked || st.Err != radio.ErrStopped {
			t.Fatalf("status after stop %+v", st)
		}
	}
}

func TestReceive(t *testing.T) {
	r := newRig(t, rigOpts{seed: 5})
	var sent [][]byte
	for i := 0; i < 40; i++ {
		f := qosData(apMAC, peerMAC, uint16(i), payload(50+i*13, byte(i)), false)
		f[1] = 0x01 // ToDS
		if i%5 == 0 {
			f = mgmtFrame(apMAC, peerMAC, byte(i))
		}
		sent = append(sent, f)
		r.mac.Receive(f)
		r.settle()
	}
	// Frames for someone else are filtered by the chip.
	r.mac.Receive(qosData([6]byte{0x02, 9, 9, 9, 9, 9}, peerMAC, 1, payload(20, 1), false))
	r.settle()
	if len(r.got) != len(sent) {
		t.Fatalf("got %d of %d", len(r.got), len(sent))
	}
	for i, g := range r.got {
		expectEqual(t, "received", g.frame, sent[i])
		if g.st.Decrypted || g.st.DecryptErr || g.st.RSSI != 40 || g.st.Rate.MCS != 7 {
			t.Fatalf("status %+v", g.st)
		}
	}
}

func mgmtFrame(dst, src [6]byte, tag byte) []byte {
	f := []byte{0x40, 0, 0, 0} // probe request
	f = append(f, dst[:]...)
	f = append(f, src[:]...)
	f = append(f, dst[:]...)
	f = append(f, 0, 0, 0, byte(len("x")), 'x', tag)
	return f
}

func TestTSF(t *testing.T) {
	r := newRig(t, rigOpts{seed: 6})
	r.advance(5*time.Millisecond, nil)
	if tsf := r.drv.TSF(); tsf != 5000 {
		t.Fatalf("TSF %d, want 5000", tsf)
	}
}

// TestHardwareCrypto: a pairwise key in the key cache; the chip encrypts
// on the way out (software CCMP decrypts it) and decrypts on the way in
// (CCMP header kept, MIC trimmed by the driver); a bad MIC is DecryptErr,
// an unknown transmitter a key miss.
func TestHardwareCrypto(t *testing.T) {
	r := newRig(t, rigOpts{seed: 7})
	tk := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	if err := r.drv.Install(5, peerMAC, 0, tk, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Install(5, bcast, 1, tk, 1); err == nil {
		t.Fatal("group key outside its key-ID slot accepted")
	}
	body := payload(120, 9)
	f := r.dmaFrame(qosData(peerMAC, apMAC, 3, body, true))
	var dn done
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(1), Key: 5, Done: dn.fn}); err != nil {
		t.Fatal(err)
	}
	r.settle()
	if dn.n != 1 || !dn.st[0].Acked {
		t.Fatalf("%+v", dn.st)
	}
	sw, _ := ccmp.NewKey(tk[:], 0)
	onAir := append([]byte(nil), r.air.frames[0]...)
	plain, err := sw.Decap(onAir)
	if err != nil {
		t.Fatalf("software CCMP cannot decrypt the chip's frame: %v", err)
	}
	expectEqual(t, "decrypted body", plain[26:], body)

	// Receive: software-encrypted by the peer.
	in := qosData(apMAC, peerMAC, 4, nil, false)
	in[1] = 0x01
	in = append(in, body...)
	in = append(in, make([]byte, ccmp.Overhead)...)[:len(in)]
	sent, err := sw.Encap(in)
	if err != nil {
		t.Fatal(err)
	}
	r.mac.Receive(sent)
	bad := append([]byte(nil), sent...)
	bad[len(bad)-1] ^= 1
	r.mac.Receive(bad)
	other := append([]byte(nil), sent...)
	other[15] = 0x77 // unknown transmitter
	r.mac.Receive(other)
	r.settle()
	if len(r.got) != 3 {
		t.Fatalf("got %d frames", len(r.got))
	}
	g := r.got[0]
	if !g.st.Decrypted || g.st.DecryptErr || len(g.frame) != len(sent)-ccmp.MICLen {
		t.Fatalf("decrypted: %+v len %d", g.st, len(g.frame))
	}
	expectEqual(t, "CCMP header kept", g.frame[26:34], sent[26:34])
	expectEqual(t, "plaintext", g.frame[34:], body)
	if !r.got[1].st.DecryptErr || r.got[1].st.Decrypted {
		t.Fatalf("bad MIC: %+v", r.got[1].st)
	}
	if r.got[2].st.Decrypted || r.got[2].st.DecryptErr || r.drv.Stats.RxKeyMiss.Load() != 1 {
		t.Fatalf("key miss: %+v", r.got[2].st)
	}
	if err := r.drv.Clear(5); err != nil {
		t.Fatal(err)
	}
	r.mac.Receive(sent)
	r.settle()
	if r.got[3].st.Decrypted {
		t.Fatal("decrypted with a cleared slot")
	}
}

// TestBadTxStatusCounted: forged status entries (wrong descriptor ID,
// direction, queue, or an ID no chain carries) are counted and skipped;
// the real completions still arrive.
func TestBadTxStatusCounted(t *testing.T) {
	r := newRig(t, rigOpts{seed: 8})
	good := uint32(0x168c)<<16 | 0x8000 | 1<<8 | 9
	for _, w := range [][9]uint32{
		{0x12345678, 0, 0, 1, 0, 0, 0, 0, 1},          // not an Atheros descriptor
		{good | 0x4000, 0, 0, 1, 0, 0, 0, 0, 1},       // control, not status
		{good&^0xf00 | 15<<8, 0, 0, 1, 0, 0, 0, 0, 1}, // QCU 15
		{good, 0xbeef << 16, 0, 1, 0, 0, 0, 0, 1},     // nobody's descriptor ID
	} {
		r.mac.InjectTxStatus(w)
	}
	r.settle()
	if n := r.drv.Stats.TxStatusBad.Load(); n != 4 {
		t.Fatalf("bad statuses counted %d, want 4", n)
	}
	var dn done
	f := r.dmaFrame(qosData(peerMAC, apMAC, 1, payload(64, 1), false))
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(1), Key: radio.NoKey, Done: dn.fn}); err != nil {
		t.Fatal(err)
	}
	r.settle()
	if dn.n != 1 || !dn.st[0].Acked {
		t.Fatalf("%+v", dn.st)
	}
}

// TestBeacons: beacons every interval at TBTT with the TSF in the
// timestamp, and a new beacon (TIM) taken at the next SWBA.
func TestBeacons(t *testing.T) {
	r := newRig(t, rigOpts{seed: 9})
	type bcn struct {
		tim byte
		tsf uint64
		ts  uint64
	}
	var got []bcn
	r.mac.OnBeacon = func(f []byte, tsf uint64) {
		got = append(got, bcn{f[len(f)-1], tsf, binary.LittleEndian.Uint64(f[24:])})
	}
	if err := r.drv.SetBeacon(beaconFrame(1), 100); err != nil {
		t.Fatal(err)
	}
	r.advance(350*time.Millisecond, nil)
	if err := r.drv.SetBeacon(beaconFrame(2), 100); err != nil {
		t.Fatal(err)
	}
	r.advance(260*time.Millisecond, nil)
	if len(got) != 5 {
		t.Fatalf("%d beacons: %+v", len(got), got)
	}
	for i, b := range got {
		if b.ts != b.tsf || b.tsf%102400 != 0 {
			t.Fatalf("beacon %d at TSF %d, timestamp %d", i, b.tsf, b.ts)
		}
		want := byte(1)
		if b.tsf > 350000 {
			want = 2
		}
		if b.tim != want {
			t.Fatalf("beacon %d TIM %d, want %d", i, b.tim, want)
		}
	}
	if s := r.mac.Stats(); s.MissedBeacons != 0 || r.drv.Stats.BeaconMissed.Load() != 0 {
		t.Fatalf("missed: model %d driver %d", s.MissedBeacons, r.drv.Stats.BeaconMissed.Load())
	}
}

// beaconFrame is a beacon whose last byte stands for its TIM.
func beaconFrame(tim byte) []byte {
	f := []byte{0x80, 0, 0, 0}
	f = append(f, bcast[:]...)
	f = append(f, apMAC[:]...)
	f = append(f, apMAC[:]...)
	f = append(f, 0, 0)
	f = append(f, make([]byte, 8)...) // timestamp
	f = append(f, 100, 0, 0x01, 0)    // interval, capabilities
	f = append(f, 0, 3, 'a', 'b', 'c')
	f = append(f, 5, 4, 0, 1, 0, tim) // TIM element
	return f
}

var _ = ar9300sim.Stats{}

// TestRestart: Stop then Start again: the rings come back and traffic
// flows; Interrupt after Stop does nothing.
func TestRestart(t *testing.T) {
	r := newRig(t, rigOpts{seed: 12})
	r.drv.Stop()
	r.drv.Interrupt()
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{make([]byte, 30)}, Series: sched(1), Key: radio.NoKey,
		Done: func(*radio.TxRequest, *radio.TxStatus) {}}); err == nil {
		t.Fatal("transmit on a stopped radio")
	}
	if err := r.drv.Start(r); err != nil {
		t.Fatal(err)
	}
	var dn done
	f := r.dmaFrame(qosData(peerMAC, apMAC, 1, payload(64, 1), false))
	if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(1), Key: radio.NoKey, Done: dn.fn}); err != nil {
		t.Fatal(err)
	}
	in := qosData(apMAC, peerMAC, 1, payload(64, 2), false)
	in[1] = 1
	r.mac.Receive(in)
	r.settle()
	if dn.n != 1 || !dn.st[0].Acked || r.rxN != 1 {
		t.Fatalf("after restart: %d done, %d received", dn.n, r.rxN)
	}
}

// TestRejectsBadRequests: malformed requests are refused with an error,
// never half-queued.
func TestRejectsBadRequests(t *testing.T) {
	r := newRig(t, rigOpts{seed: 13})
	f := r.dmaFrame(qosData(peerMAC, apMAC, 1, payload(64, 1), false))
	nop := func(*radio.TxRequest, *radio.TxStatus) {}
	for name, req := range map[string]*radio.TxRequest{
		"no MPDUs":       {Series: sched(1), Key: radio.NoKey, Done: nop},
		"no tries":       {MPDUs: [][]byte{f}, Key: radio.NoKey, Done: nop},
		"bad queue":      {MPDUs: [][]byte{f}, Series: sched(1), Key: radio.NoKey, Queue: 4, Done: nop},
		"bad key slot":   {MPDUs: [][]byte{f}, Series: sched(1), Key: 500, Done: nop},
		"empty key slot": {MPDUs: [][]byte{f}, Series: sched(1), Key: 9, Done: nop},
		"no CCMP room":   {MPDUs: [][]byte{f[:30]}, Series: sched(1), Key: 9, Done: nop},
		"no Done":        {MPDUs: [][]byte{f}, Series: sched(1), Key: radio.NoKey},
		"runt":           {MPDUs: [][]byte{f[:8]}, Series: sched(1), Key: radio.NoKey, Done: nop},
	} {
		if err := r.drv.Transmit(req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Nothing leaked: the whole ring is still usable.
	var dn done
	for i := 0; i < 8; i++ {
		g := r.dmaFrame(qosData(peerMAC, apMAC, uint16(i), payload(64, 1), false))
		if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{g}, Series: sched(1), Key: radio.NoKey, Done: dn.fn}); err != nil {
			t.Fatal(err)
		}
	}
	r.settle()
	if dn.n != 8 {
		t.Fatalf("%d of 8", dn.n)
	}
}

// TestRetransmissionKeepsPN: an MPDU resubmitted by the MAC layer (a
// software retry after a missing BlockAck bit) goes out with the PN it
// first had; a new MPDU takes the next one.
func TestRetransmissionKeepsPN(t *testing.T) {
	r := newRig(t, rigOpts{seed: 14})
	tk := [16]byte{9}
	if err := r.drv.Install(4, peerMAC, 0, tk, 100); err != nil {
		t.Fatal(err)
	}
	a := r.dmaFrame(qosData(peerMAC, apMAC, 1, payload(64, 1), true))
	b := r.dmaFrame(qosData(peerMAC, apMAC, 2, payload(64, 2), true))
	var dn done
	for _, mpdus := range [][][]byte{{a}, {b}, {a}} {
		if err := r.drv.Transmit(&radio.TxRequest{MPDUs: mpdus, Series: sched(1), Key: 4, Done: dn.fn}); err != nil {
			t.Fatal(err)
		}
		r.settle()
	}
	pn := func(f []byte) uint64 {
		h := f[26:34]
		return uint64(h[0]) | uint64(h[1])<<8 | uint64(binary.LittleEndian.Uint32(h[4:]))<<16
	}
	if len(r.air.frames) != 3 {
		t.Fatalf("%d frames", len(r.air.frames))
	}
	if p := []uint64{pn(r.air.frames[0]), pn(r.air.frames[1]), pn(r.air.frames[2])}; p[0] != 100 || p[1] != 101 || p[2] != 100 {
		t.Fatalf("PNs %v, want [100 101 100]", p)
	}
	expectEqual(t, "retransmission", r.air.frames[2], r.air.frames[0])
}
