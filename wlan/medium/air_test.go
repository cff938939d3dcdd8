package medium

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/ath/chansim"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/radio"
)

// sendAggregates sends rounds of n-subframe aggregates of 1500-byte
// MPDUs at r from rs[0] to rs[1] and returns the fraction of subframes
// acknowledged.
func sendAggregates(t *testing.T, m *Medium, from *SimRadio, to wlan.MAC, r airtime.Rate, rounds, n int) float64 {
	t.Helper()
	var sent, acked int
	for round := 0; round < rounds; round++ {
		var mpdus [][]byte
		for i := 0; i < n; i++ {
			mpdus = append(mpdus, qosData(to, from.addr, uint16(round*n+i)%4096, make([]byte, 1500), false))
		}
		var got *radio.TxStatus
		req := &radio.TxRequest{MPDUs: mpdus, Key: radio.NoKey, Done: func(_ *radio.TxRequest, st *radio.TxStatus) { s := *st; got = &s }}
		req.Series[0] = radio.Series{Rate: r, Tries: 1}
		if err := from.Transmit(req); err != nil {
			t.Fatal(err)
		}
		m.Run(10 * time.Millisecond)
		if got == nil {
			t.Fatal("no completion")
		}
		sent += n
		for i := 0; i < n; i++ {
			if got.Acked && got.BlockAck&(1<<i) != 0 {
				acked++
			}
		}
	}
	return float64(acked) / float64(sent)
}

// On a chansim link the error rate follows the SNR and the rate: the
// fringe scenario (17 dB) carries MCS 0 and loses most of MCS 15; the
// close one (40 dB) carries MCS 15.
func TestChannelModel(t *testing.T) {
	scs := chansim.Scenarios(1, 3)
	for _, c := range []struct {
		sc       chansim.Scenario
		r        airtime.Rate
		min, max float64
	}{
		{scs[0], airtime.MCS(15, true, true), 0.97, 1},
		{scs[1], airtime.MCS(0, false, false), 0.97, 1},
		{scs[1], airtime.MCS(15, true, true), 0, 0.2},
	} {
		m, rs, logs := newRadios(t, Config{Seed: 9}, macA, macB)
		ch, err := chansim.NewChannel(c.sc, chansim.DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		m.SetChannelModel(rs[0], rs[1], ch)
		m.SetChannelModel(rs[1], rs[0], ch)
		n := 8
		if c.r.MCS == 0 {
			n = 2
		}
		got := sendAggregates(t, m, rs[0], macB, c.r, 40, n)
		t.Logf("%s at %v: %.3f delivered", c.sc.Name, c.r, got)
		if got < c.min || got > c.max {
			t.Errorf("%s at %v: %.3f delivered, want %.2f..%.2f", c.sc.Name, c.r, got, c.min, c.max)
		}
		// The RSSI reported is the link's SNR (per branch, 20 MHz).
		if len(logs[1].got) > 0 {
			rssi := float64(logs[1].got[0].st.RSSI)
			mean := c.sc.Profile[0].SNRdB
			if rssi < mean-10 || rssi > mean+10 {
				t.Errorf("RSSI %.0f for a %.0f dB link", rssi, mean)
			}
		}
	}
}

// tshark reads the capture's radiotap headers: rate or MCS, bandwidth,
// guard interval, channel, signal, and the A-MPDU reference tying
// subframes together, and the BlockAck as a BlockAck.
func TestTsharkReadsRadiotap(t *testing.T) {
	var capture bytes.Buffer
	ht := radio.Channel{Number: 36, Band5G: true, Width40: true, Above: true}
	m, err := New(Config{Start: time.Unix(1_800_000_000, 0), Seed: 10, Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.NewRadio(RadioConfig{Addr: macA, Channel: ht})
	b, _ := m.NewRadio(RadioConfig{Addr: macB, Channel: ht})
	a.Start(&rxLog{})
	b.Start(&rxLog{})
	var mpdus [][]byte
	for i := 0; i < 3; i++ {
		mpdus = append(mpdus, qosData(macB, macA, uint16(i), []byte("aggregated"), false))
	}
	req := &radio.TxRequest{MPDUs: mpdus, Key: radio.NoKey}
	req.Series[0] = radio.Series{Rate: airtime.MCS(15, true, true), Tries: 2}
	a.Transmit(req)
	m.Run(5 * time.Millisecond)
	single := &radio.TxRequest{MPDUs: [][]byte{qosData(macB, macA, 3, []byte("single"), false)}, Key: radio.NoKey}
	single.Series[0] = radio.Series{Rate: airtime.Legacy(24000), Tries: 2}
	a.Transmit(single)
	m.Run(5 * time.Millisecond)
	if err := m.CaptureErr(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "air.pcap")
	if err := os.WriteFile(path, capture.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tshark", "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "wlan.fc.type_subtype", "-e", "radiotap.mcs.index", "-e", "radiotap.mcs.bw", "-e", "radiotap.mcs.gi",
		"-e", "radiotap.datarate", "-e", "radiotap.channel.freq", "-e", "radiotap.dbm_antsignal",
		"-e", "radiotap.ampdu.reference", "-e", "wlan.ba.control.ba_type", "-e", "wlan.ba.bm", "-e", "_ws.expert.message").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	t.Logf("tshark:\n%s", out)
	if len(lines) != 6 {
		t.Fatalf("%d frames", len(lines))
	}
	for i := 0; i < 3; i++ {
		f := strings.Split(lines[i], "|")
		// QoS data (0x0028), MCS 15, 40 MHz (1), short GI (1), 5180 MHz, the same A-MPDU reference.
		if f[0] != "0x0028" || f[1] != "15" || f[2] != "1" || f[3] != "1" || f[4] != "300" || f[5] != "5180" || f[7] == "" || f[10] != "" {
			t.Errorf("subframe %d: %q", i, f)
		}
		if f[7] != strings.Split(lines[0], "|")[7] {
			t.Errorf("subframe %d in another A-MPDU", i)
		}
	}
	ba := strings.Split(lines[3], "|")
	// A compressed BlockAck (type 2) for the three subframes, at the
	// control rate for MCS 15 (24 Mb/s).
	if ba[0] != "0x0019" || ba[4] != "24" || ba[8] != "0x0002" || ba[9] != "0700000000000000" || ba[10] != "" {
		t.Errorf("BlockAck: %q", ba)
	}
	s := strings.Split(lines[4], "|")
	if s[0] != "0x0028" || s[4] != "24" || s[1] != "" {
		t.Errorf("single: %q", s)
	}
	if ack := strings.Split(lines[5], "|"); ack[0] != "0x001d" {
		t.Errorf("ACK: %q", ack)
	}
}

// BlockAcks come from the air: whatever bytes arrive, parsing and
// mapping them to a request never panics and never acknowledges an MPDU
// that was not in the bitmap's window.
func FuzzBlockAckFromAir(f *testing.F) {
	b := wlan.BlockAck{TID: 0, StartSeq: 4094, Bitmap: 0b1011}
	f.Add(wlan.AppendBlockAck(nil, 0, macA, macB, &b), uint16(4094))
	f.Add([]byte{0x94, 0, 0, 0}, uint16(0))
	f.Add(append(wlan.AppendBlockAck(nil, 0, macA, macB, &b)[:20], 0, 0), uint16(3))
	f.Fuzz(func(t *testing.T, frame []byte, first uint16) {
		var mpdus [][]byte
		for i := 0; i < 8; i++ {
			mpdus = append(mpdus, qosData(macB, macA, (first+uint16(i))%4096, nil, false))
		}
		ba, err := parseBlockAck(frame)
		if err != nil {
			return
		}
		got := mapBlockAck(&ba, mpdus)
		for i := range mpdus {
			if got&(1<<i) == 0 {
				continue
			}
			d := wlan.SeqSub((first+uint16(i))%4096, ba.StartSeq)
			if d >= 64 || ba.Bitmap&(1<<d) == 0 {
				t.Fatalf("MPDU %d acknowledged without its bit", i)
			}
		}
		if got>>len(mpdus) != 0 {
			t.Fatal("bits beyond the request")
		}
	})
}

// A steady exchange of single MPDUs and aggregates allocates nothing on
// the medium (buffers, PPDUs and deliveries are pooled).
func TestSteadyStateAllocs(t *testing.T) {
	m, rs, _ := newRadios(t, Config{Seed: 11}, macA, macB)
	rs[1].Start(nopRx{})
	var mpdus [][]byte
	for i := 0; i < 16; i++ {
		mpdus = append(mpdus, qosData(macB, macA, uint16(i), make([]byte, 1500), false))
	}
	req := &radio.TxRequest{MPDUs: mpdus, Key: radio.NoKey, Done: func(*radio.TxRequest, *radio.TxStatus) {}}
	req.Series[0] = radio.Series{Rate: airtime.MCS(7, false, false), Tries: 2}
	one := &radio.TxRequest{MPDUs: mpdus[:1], Key: radio.NoKey, Done: req.Done}
	one.Series = req.Series
	round := func() {
		if rs[0].Transmit(req) != nil || rs[0].Transmit(one) != nil {
			t.Fatal("refused")
		}
		m.advance(m.us + 20000)
	}
	round()
	if n := testing.AllocsPerRun(50, round); n != 0 {
		t.Fatalf("%.1f allocations per round", n)
	}
	if s := rs[0].Stats(); s.TxAcked < 2*51 || s.TxFailed != 0 || rs[1].Stats().BlockAcks == 0 {
		t.Fatalf("exchanges: %+v", s)
	}
}

type nopRx struct{}

func (nopRx) Receive([]byte, *radio.RxStatus) {}

// Whatever arrives over the air goes through a radio's receive path
// (key-cache lookup, CCMP check) without a panic: handed up as received,
// decrypted, or flagged.
func FuzzReceivePath(f *testing.F) {
	tk := [16]byte{9: 9}
	f.Add(qosData(macB, macA, 1, []byte("plain"), false))
	prot := qosData(macB, macA, 2, []byte("protected"), true)
	f.Add(prot)
	grp := qosData(wlan.Broadcast, macA, 3, []byte("group"), true)
	grp[wlan.DataHeaderLen+2+3] = extIV | 1<<6
	f.Add(grp)
	f.Add([]byte{0x88, 0x40})
	f.Fuzz(func(t *testing.T, frame []byte) {
		m, rs, _ := newRadios(t, Config{Seed: 1}, macA, macB)
		rs[1].KeyCache().Install(0, macA, 0, tk, 1)
		rs[1].KeyCache().Install(1, wlan.Broadcast, 1, tk, 1)
		var got rxLog
		rs[1].Start(&got)
		if err := m.Inject(frame); err != nil {
			return
		}
		m.Deliver()
		if len(got.got) != 1 {
			t.Fatalf("%d frames handed up", len(got.got))
		}
		st := got.got[0].st
		if st.Decrypted && st.DecryptErr {
			t.Fatal("decrypted and failed")
		}
		if !st.Decrypted && !bytes.Equal(got.got[0].frame, frame) {
			t.Fatal("frame changed without decryption")
		}
	})
}

func BenchmarkAggregateExchange(b *testing.B) {
	m, _ := New(Config{Seed: 1})
	ht40 := radio.Channel{Number: 36, Band5G: true, Width40: true, Above: true}
	a, _ := m.NewRadio(RadioConfig{Addr: macA, Channel: ht40})
	r, _ := m.NewRadio(RadioConfig{Addr: macB, Channel: ht40})
	a.Start(nopRx{})
	r.Start(nopRx{})
	var mpdus [][]byte
	for i := 0; i < 32; i++ {
		mpdus = append(mpdus, qosData(macB, macA, uint16(i), make([]byte, 1500), false))
	}
	req := &radio.TxRequest{MPDUs: mpdus, Key: radio.NoKey, Done: func(*radio.TxRequest, *radio.TxStatus) {}}
	req.Series[0] = radio.Series{Rate: airtime.MCS(15, true, true), Tries: 2}
	b.ReportAllocs()
	b.SetBytes(32 * 1500)
	for i := 0; i < b.N; i++ {
		if err := a.Transmit(req); err != nil {
			b.Fatal(err)
		}
		m.advance(m.us + 5000)
	}
	b.StopTimer()
	if s := a.Stats(); s.TxAcked != uint64(b.N) {
		b.Fatalf("%d of %d acknowledged", s.TxAcked, b.N)
	}
}
