package txq

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/agg"
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/chansim"
	"github.com/gowrt/gowrt/ath/rate"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/medium"
	"github.com/gowrt/gowrt/wlan/radio"
)

var (
	apMAC = wlan.MAC{2, 0xa, 0, 0, 0, 1}
	lanSA = wlan.MAC{2, 0xe, 0, 0, 0, 1}
)

// htCaps is a 2x2 HT40 SGI device (MCS 0-15) taking 64 KiB A-MPDUs.
var htCaps = rate.Caps{
	Legacy: []uint32{6000, 9000, 12000, 18000, 24000, 36000, 48000, 54000},
	MCS:    0xffff, HT40: true, SGI: true, MaxAMPDU: agg.MaxPSDU,
}

var ht40 = radio.Channel{Number: 36, Band5G: true, Width40: true, Above: true}

// sink is a station's receiver: it counts the unique MSDU payload bytes
// (each payload starts with a unique 64-bit id) of data frames to it.
type sink struct {
	addr  wlan.MAC
	seen  []uint64 // bitmap of ids
	bytes uint64
	dups  uint64
}

func (k *sink) Receive(f []byte, st *radio.RxStatus) {
	h, err := wlan.ParseHeader(f)
	if err != nil || !h.FC.IsQoSData() || h.Addr1 != k.addr {
		return
	}
	if !h.QoS.AMSDU() {
		k.msdu(f[h.Len:])
		return
	}
	rd := wlan.NewAMSDUReader(f[h.Len:])
	for {
		sub, ok := rd.Next()
		if !ok {
			break
		}
		k.msdu(sub.MSDU)
	}
}

func (k *sink) msdu(m []byte) {
	_, payload, err := wlan.ParseMSDU(m)
	if err != nil || len(payload) < 8 {
		return
	}
	id := binary.BigEndian.Uint64(payload)
	w, b := id/64, id%64
	if w >= uint64(len(k.seen)) {
		return
	}
	if k.seen[w]&(1<<b) != 0 {
		k.dups++
		return
	}
	k.seen[w] |= 1 << b
	k.bytes += uint64(len(payload))
}

// airtimeBound is the goodput (Mb/s) of back-to-back A-MPDUs of
// msdu-byte MSDUs at r, each as large as the 4 ms limit and the BlockAck
// window allow, with best-effort EDCA access (AIFS, mean backoff) and
// the BlockAck: what ath/airtime says the air can carry.
func airtimeBound(p airtime.PHY, r airtime.Rate, msdu int) (mbps float64, n int) {
	mpdu := msdu + wlan.MSDUHeaderLen + 26 + 4
	lens := make([]int, agg.MaxSubframes)
	for i := range lens {
		lens[i] = mpdu
	}
	n, psdu, err := agg.Form(lens, agg.Limits{MaxBytes: agg.ForRate(p, r, agg.DefaultLimitUs)})
	if err != nil {
		panic(err)
	}
	p.AIFSN = 3 // AC_BE
	us := p.AIFS() + p.Backoff(0) + p.Exchange(r, psdu, airtime.BlockAck, false)
	return float64(n*msdu*8) / float64(us), n
}

type goodputResult struct {
	mbps, bound, ratio float64
	stats              []Stats
	dups               uint64
	view               string
}

// runGoodput drives k close stations with saturated 1500-byte downlink
// traffic from the AP through txq over the medium for dur after warm.
func runGoodput(t testing.TB, k int, warm, dur time.Duration) goodputResult {
	return runGoodputCfg(t, k, warm, dur, false)
}

func runGoodputCfg(t testing.TB, k int, warm, dur time.Duration, amsdu bool) goodputResult {
	start := time.Unix(1_800_000_000, 0)
	m, err := medium.New(medium.Config{Start: start, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	ap, err := m.NewRadio(medium.RadioConfig{Addr: apMAC, Channel: ht40})
	if err != nil {
		t.Fatal(err)
	}
	ap.Start(&sink{})
	now := func() time.Duration { return m.Now().Sub(start) }
	s, err := New(Config{Radio: ap, Own: apMAC, Caps: htCaps, Now: now, Buffers: 512 * k, AMSDU: amsdu})
	if err != nil {
		t.Fatal(err)
	}
	close := chansim.Scenarios(1, 7)[0] // static close, 40 dB
	const msdu = 1500
	total := (warm + dur).Seconds() * 400e6 / (msdu * 8) // more ids than frames sent
	var sinks []*sink
	var stas []*Station
	for i := 0; i < k; i++ {
		addr := wlan.MAC{2, 0x5, 0, 0, 0, byte(i + 1)}
		r, err := m.NewRadio(medium.RadioConfig{Addr: addr, Channel: ht40})
		if err != nil {
			t.Fatal(err)
		}
		sc := close
		sc.Seed += uint64(i)
		down, err := chansim.NewChannel(sc, chansim.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		sc.Seed += 100
		up, _ := chansim.NewChannel(sc, chansim.DefaultParams())
		m.SetChannelModel(ap, r, down)
		m.SetChannelModel(r, ap, up)
		sk := &sink{addr: addr, seen: make([]uint64, int(total)/64+1)}
		r.Start(sk)
		sinks = append(sinks, sk)
		st, err := s.AddStation(addr, htCaps, radio.NoKey)
		if err != nil {
			t.Fatal(err)
		}
		stas = append(stas, st)
	}
	payload := make([]byte, msdu)
	var id uint64
	fill := func() {
		for _, st := range stas {
			for {
				binary.BigEndian.PutUint64(payload, id)
				if s.Enqueue(st, 0, lanSA, 0x0800, payload) != nil {
					break
				}
				id++
			}
		}
	}
	step := time.Millisecond
	for el := time.Duration(0); el < warm; el += step {
		fill()
		m.Run(step)
	}
	var before uint64
	for _, sk := range sinks {
		before += sk.bytes
	}
	for el := time.Duration(0); el < dur; el += step {
		fill()
		m.Run(step)
	}
	var res goodputResult
	var after uint64
	for i, sk := range sinks {
		after += sk.bytes
		res.dups += sk.dups
		res.stats = append(res.stats, s.Stats(stas[i]))
	}
	res.mbps = float64(after-before) * 8 / dur.Seconds() / 1e6
	res.bound, _ = airtimeBound(airtime.FiveGHz(), airtime.MCS(15, true, true), msdu)
	res.ratio = res.mbps / res.bound
	var view strings.Builder
	if err := s.WriteStats(&view); err != nil {
		t.Fatal(err)
	}
	res.view = view.String()
	return res
}

func (r goodputResult) String() string {
	s := fmt.Sprintf("goodput %.1f Mb/s, airtime bound %.1f Mb/s, ratio %.3f", r.mbps, r.bound, r.ratio)
	for i, st := range r.stats {
		s += fmt.Sprintf("\n  sta %d: exchanges %d subframes %d (%.1f/aggregate) retries %d dropped %d hist %v",
			i, st.Exchanges, st.Subframes, float64(st.Subframes)/float64(st.Exchanges), st.Retries, st.Dropped, st.AggHist)
	}
	return s
}

// The measurement: one 2x2 HT40 SGI station close to the AP,
// aggregation on, against the airtime bound (goal ≥ 0.9); and 4 stations.
func TestGoodputOneStation(t *testing.T) {
	r := runGoodput(t, 1, 300*time.Millisecond, time.Second)
	t.Log(r)
	t.Logf("athstats view:\n%s", r.view)
	// The view names the station, its current rate and the rate table.
	if !strings.Contains(r.view, "station 02:05:00:00:00:01  rate MCS15/40/SGI") || !strings.Contains(r.view, "*  MCS15/40/SGI") {
		t.Errorf("view:\n%s", r.view)
	}
	if r.ratio < 0.9 {
		t.Errorf("ratio %.3f below 0.9", r.ratio)
	}
}

func TestGoodputFourStations(t *testing.T) {
	r := runGoodput(t, 4, time.Second, time.Second)
	t.Log(r)
	if r.ratio < 0.9 {
		t.Errorf("ratio %.3f below 0.9", r.ratio)
	}
}

// With A-MSDU packing on top of A-MPDU (two 1500-byte MSDUs per MPDU
// within the 3839-byte limit) the per-MPDU overhead shrinks: the goodput
// may exceed the A-MPDU-only bound.
func TestGoodputAMSDU(t *testing.T) {
	r := runGoodputCfg(t, 1, time.Second, time.Second, true)
	t.Log(r)
	if r.ratio < 0.9 || r.dups != 0 {
		t.Errorf("ratio %.3f, %d duplicates", r.ratio, r.dups)
	}
}
