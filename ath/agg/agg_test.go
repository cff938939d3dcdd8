package agg

import (
	"errors"
	"testing"

	"github.com/gowrt/gowrt/ath/airtime"
)

func TestForRateHandComputed(t *testing.T) {
	p := airtime.FiveGHz()
	cases := []struct {
		r    airtime.Rate
		want int
	}{
		// HT20 MCS0 LGI: preamble 36 µs leaves 3964 µs = 991 symbols of 26
		// bits = 25766 bits, minus 16 service + 6 tail = 25744 bits = 3218
		// bytes. (FreeBSD/ath9k's static table says 3212.)
		{airtime.MCS(0, false, false), 3218},
		// HT20 MCS7 SGI: 4·ceil(0.9·N) ≤ 3964 → N ≤ 1101 (0.9·1101 = 990.9);
		// 1101·260 = 286260 bits − 22 = 286238 bits → 35779 bytes.
		{airtime.MCS(7, false, true), 35779},
		// HT40 MCS0 LGI: 991 symbols · 54 = 53514 − 22 = 53492 bits → 6686
		// bytes (table: 6680).
		{airtime.MCS(0, true, false), 6686},
		// HT40 MCS15 SGI: 65535 bytes take 1792 µs (airtime tests) → capped.
		{airtime.MCS(15, true, true), MaxPSDU},
		// Legacy rates do not aggregate.
		{airtime.Legacy(54000), 0},
	}
	for _, c := range cases {
		got := ForRate(p, c.r, DefaultLimitUs)
		if got != c.want {
			t.Errorf("ForRate(%v) = %d, want %d", c.r, got, c.want)
		}
		if got > 0 && got < MaxPSDU {
			if p.TxTime(c.r, got) > DefaultLimitUs || p.TxTime(c.r, got+1) <= DefaultLimitUs {
				t.Errorf("%v: %d is not the boundary", c.r, got)
			}
		}
	}
	if got := ForRate(p, airtime.MCS(0, false, false), 30); got != 0 {
		t.Errorf("limit below the preamble: %d", got)
	}
}

func TestPeerMax(t *testing.T) {
	for exp, want := range []int{8191, 16383, 32767, 65535} {
		got, err := PeerMaxAMPDU(uint8(exp))
		if err != nil || got != want {
			t.Errorf("exp %d: %d, %v", exp, got, err)
		}
	}
	if _, err := PeerMaxAMPDU(4); err == nil {
		t.Error("exponent 4 accepted")
	}
}

func TestSubframeAndSpacing(t *testing.T) {
	// 100-byte MPDU: 4 + 100 = 104 < 256 → padded with 38 delimiters to 256.
	if got := SubframeLen(100, 0, false); got != 256 {
		t.Errorf("short subframe = %d", got)
	}
	// 1538: 1542, padded to 1544 unless last.
	if got := SubframeLen(1538, 0, false); got != 1544 {
		t.Errorf("1538 non-last = %d", got)
	}
	if got := SubframeLen(1538, 0, true); got != 1542 {
		t.Errorf("1538 last = %d", got)
	}
	// Density 7 (16 µs) at HT40 MCS15 SGI: ceil(16/3.6) = 5 symbols ·
	// 1080 bits / 8 = 675 bytes; a 100-byte MPDU (104) needs 143 more
	// delimiters: 104 + 572 = 676.
	r := airtime.MCS(15, true, true)
	sp := SpacingBytes(r, 7)
	if sp != 675 {
		t.Fatalf("SpacingBytes = %d, want 675", sp)
	}
	if got := SubframeLen(100, sp, false); got != 676 {
		t.Errorf("spaced subframe = %d, want 676", got)
	}
	// Density 3 (1 µs) at HT20 MCS7 LGI: 1 symbol · 260 / 8 = 32 bytes.
	if got := SpacingBytes(airtime.MCS(7, false, false), 3); got != 32 {
		t.Errorf("1 µs spacing = %d", got)
	}
	if SpacingBytes(r, 8) != 0 || SpacingBytes(airtime.Legacy(6000), 7) != 0 {
		t.Error("invalid density accepted")
	}
}

func TestForm(t *testing.T) {
	q := []int{1538, 1538, 1538, 1538}
	// At HT20 MCS0 LGI (3218 bytes): 1544 + 1542 = 3086; a third would
	// need 2 + 1542 more = 4630 > 3218.
	n, psdu, err := Form(q, Limits{MaxBytes: 3218})
	if err != nil || n != 2 || psdu != 3086 {
		t.Errorf("Form = %d, %d, %v; want 2, 3086", n, psdu, err)
	}
	// BlockAck window caps subframes at 64 whatever the length budget.
	small := make([]int, 100)
	for i := range small {
		small[i] = 60
	}
	n, psdu, err = Form(small, Limits{MaxBytes: MaxPSDU})
	if err != nil || n != 64 || psdu != 64*256 {
		t.Errorf("small frames: %d, %d, %v", n, psdu, err)
	}
	if _, _, err := Form([]int{4000}, Limits{MaxBytes: 3218}); !errors.Is(err, ErrTooLong) {
		t.Errorf("oversized MPDU: %v", err)
	}
	if _, _, err := Form([]int{100, -1}, Limits{MaxBytes: 3218}); err == nil {
		t.Error("negative MPDU length accepted")
	}
	// The result always fits, for any prefix length.
	for lim := 300; lim < 20000; lim += 733 {
		n, psdu, err := Form(q, Limits{MaxBytes: lim})
		if err != nil {
			continue
		}
		sum := 0
		for i := 0; i < n; i++ {
			sum += SubframeLen(q[i], 0, i == n-1)
		}
		if sum != psdu || psdu > lim {
			t.Errorf("limit %d: n %d psdu %d sum %d", lim, n, psdu, sum)
		}
	}
}

func TestTXOPPlanFillsWithoutOversizing(t *testing.T) {
	tx := TXOP{PHY: airtime.FiveGHz(), Rate: airtime.MCS(7, false, true), MaxAMSDU: MaxAMSDULong, LimitUs: 1500}
	q := make([]int, 200)
	for i := range q {
		q[i] = 100 // TCP-ACK-sized MSDUs
	}
	var out [32]PPDU
	n, used, err := tx.Plan(q, 4094, out[:])
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Fatalf("only %d PPDUs: the rest of the TXOP was not filled", n)
	}
	if used > tx.LimitUs {
		t.Errorf("plan uses %d µs of a %d µs TXOP", used, tx.LimitUs)
	}
	next := 0
	t0 := 0
	for i, p := range out[:n] {
		if p.First != next {
			t.Errorf("PPDU %d starts at MSDU %d, want %d", i, p.First, next)
		}
		next += p.N
		if p.MPDU-MPDUOverhead > tx.MaxAMSDU {
			t.Errorf("PPDU %d: A-MSDU %d bytes", i, p.MPDU-MPDUOverhead)
		}
		if want := uint16(4094+i) & 0xfff; p.Seq != want {
			t.Errorf("PPDU %d seq %d want %d", i, p.Seq, want)
		}
		if i > 0 {
			t0 += tx.PHY.SIFS
		}
		t0 += p.Airtime
		if t0 > tx.LimitUs {
			t.Errorf("PPDU %d ends at %d µs, past the TXOP", i, t0)
		}
	}
	// After the plan, not even one more MSDU fits.
	if next < len(q) && used+tx.PHY.SIFS+tx.exchange(MPDUOverhead+q[next]) <= tx.LimitUs {
		t.Errorf("TXOP left unfilled: used %d", used)
	}
	// A first MSDU longer than the TXOP still goes, alone.
	tx.LimitUs = 10
	n, _, err = tx.Plan([]int{1500, 100}, 0, out[:])
	if err != nil || n != 1 || out[0].N != 1 {
		t.Errorf("oversized first MSDU: n %d %+v %v", n, out[0], err)
	}
	if _, _, err := tx.Plan([]int{0}, 0, out[:]); err == nil {
		t.Error("zero-length MSDU accepted")
	}
}

// receiver delivers MPDUs with the duplicate filter of 802.11-2020 10.3.2.14:
// a retransmission with an already-received sequence number is discarded.
type receiver struct {
	seen      map[uint16]bool
	delivered map[int]int // MSDU id → times delivered
}

func (r *receiver) rx(p PPDU) {
	if r.seen[p.Seq] {
		return
	}
	r.seen[p.Seq] = true
	for i := p.First; i < p.First+p.N; i++ {
		r.delivered[i]++
	}
}

// TestHazardAMSDUSplitRetry: an A-MSDU is received but its ACK is lost; the
// sender retransmits at a lower rate. Splitting the failed A-MSDU into new
// MPDUs with fresh sequence numbers delivers its MSDUs twice; Retry keeps
// the sequence number and the receiver drops the duplicate.
func TestHazardAMSDUSplitRetry(t *testing.T) {
	q := make([]int, 40)
	for i := range q {
		q[i] = 200
	}
	run := func(split bool) (dups int) {
		fast := TXOP{PHY: airtime.FiveGHz(), Rate: airtime.MCS(7, false, false), MaxAMSDU: MaxAMSDULong, LimitUs: 3000}
		slow := fast
		slow.Rate = airtime.MCS(1, false, false)
		rx := &receiver{seen: map[uint16]bool{}, delivered: map[int]int{}}
		var out, out2 [8]PPDU
		n, _, err := fast.Plan(q, 100, out[:])
		if err != nil || n == 0 {
			t.Fatal(n, err)
		}
		first := out[0]
		rx.rx(first) // received, but the ACK is lost
		seq := first.Seq + uint16(n)
		if split {
			// Wrong: re-plan the failed MSDUs at the slower rate.
			m, _, _ := slow.Plan(q[first.First:first.First+first.N], seq, out2[:])
			for _, p := range out2[:m] {
				p.First += first.First
				rx.rx(p)
			}
		} else {
			rx.rx(slow.Retry(first))
		}
		for i := first.First; i < first.First+first.N; i++ {
			if rx.delivered[i] != 1 {
				dups++
			}
		}
		return dups
	}
	if run(true) == 0 {
		t.Error("splitting a failed A-MSDU into new sequence numbers went unnoticed")
	}
	if d := run(false); d != 0 {
		t.Errorf("Retry delivered %d MSDUs twice", d)
	}
}

func BenchmarkForm(b *testing.B) {
	q := make([]int, 64)
	for i := range q {
		q[i] = 1538
	}
	l := Limits{MaxBytes: MaxPSDU}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Form(q, l)
	}
}
