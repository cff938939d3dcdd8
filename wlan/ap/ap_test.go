package ap_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// exchange runs test (a)'s traffic: station 0 and 1 join, then frames
// go station→DS, DS→station, station→station both ways and a broadcast.
// It returns the BSS for the capture.
func exchange(t *testing.T) *bss {
	return exchangeWith(t, ap.Config{}, sta.Config{Passphrase: testPassphrase})
}

func exchangeWith(t *testing.T, cfg ap.Config, scfg sta.Config) *bss {
	b := newBSS(t, cfg)
	b.addStationConfig(t, 0, scfg)
	b.addStationConfig(t, 1, scfg)
	b.m.Run(time.Second)
	for i, s := range b.stas {
		if s.State() != sta.Authorized {
			t.Fatalf("station %d: %v, want authorized", i, s.State())
		}
	}
	s0, s1 := staAddr(0), staAddr(1)
	toDS := ethICMP(dsAddr, s0, 100, 1, 8, 1)
	fromDS := ethICMP(s0, dsAddr, 1, 100, 0, 1)
	s0to1 := ethICMP(s1, s0, 100, 101, 8, 2)
	s1to0 := ethICMP(s0, s1, 101, 100, 0, 2)
	arp := ethARP(s1, 101, 1)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.stas[0].Send(toDS))
	b.m.Deliver()
	must(b.ap.SendFromDS(fromDS))
	must(b.stas[0].Send(s0to1))
	b.m.Deliver()
	must(b.stas[1].Send(s1to0))
	must(b.stas[1].Send(arp))
	b.m.Run(10 * time.Millisecond)

	if len(b.toDS) != 2 || !bytes.Equal(b.toDS[0], toDS) || !bytes.Equal(b.toDS[1], arp) {
		t.Errorf("DS got %x\nwant %x and %x", b.toDS, toDS, arp)
	}
	// Station 0 also gets station 1's broadcast ARP, sent with the GTK.
	if len(b.staRx[0]) != 3 || !bytes.Equal(b.staRx[0][0], fromDS) || !bytes.Equal(b.staRx[0][1], s1to0) || !bytes.Equal(b.staRx[0][2], arp) {
		t.Errorf("station 0 got %x", b.staRx[0])
	}
	// Station 1 gets station 0's frame; the AP's broadcast copy of its
	// own ARP is ignored.
	if len(b.staRx[1]) != 1 || !bytes.Equal(b.staRx[1][0], s0to1) {
		t.Errorf("station 1 got %x", b.staRx[1])
	}
	if b.stas[0].Stats.Received.Load() != 3 {
		t.Errorf("station 0 received %d", b.stas[0].Stats.Received.Load())
	}
	if got := b.ap.Stats.Relayed.Load(); got != 2 {
		t.Errorf("relayed %d, want 2", got)
	}
	if err := b.m.CaptureErr(); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTwoStationsExchange(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  ap.Config
		scfg sta.Config
	}{
		{"software", ap.Config{}, sta.Config{Passphrase: testPassphrase}},
		{"hardware", ap.Config{Crypto: ap.CryptoHardware}, sta.Config{Passphrase: testPassphrase}},
		{"hardware-both-ends", ap.Config{Crypto: ap.CryptoHardware}, sta.Config{Passphrase: testPassphrase, HardwareCrypto: true}},
		{"open", ap.Config{Open: true}, sta.Config{Open: true}},
	} {
		t.Run(c.name, func(t *testing.T) { twoStations(t, c.cfg, c.scfg) })
	}
}

func twoStations(t *testing.T, cfg ap.Config, scfg sta.Config) {
	b := exchangeWith(t, cfg, scfg)
	checkAir(t, b, cfg)
	// ath10k's raw mode: no A-MSDU when the radio only sees finished,
	// software-encrypted MPDUs.
	if want := cfg.Open || cfg.Crypto == ap.CryptoHardware; b.ap.AMSDU() != want {
		t.Errorf("AMSDU() = %v, want %v", b.ap.AMSDU(), want)
	}
	infos := b.ap.Stations()
	if len(infos) != 2 {
		t.Fatalf("stations %+v", infos)
	}
	aids := map[uint16]bool{}
	for _, in := range infos {
		if !in.Authorized || in.AID == 0 {
			t.Errorf("%+v", in)
		}
		aids[in.AID] = true
	}
	if len(aids) != 2 {
		t.Errorf("AIDs not distinct: %+v", infos)
	}
	for _, in := range infos {
		if in.HardwareKey != (cfg.Crypto == ap.CryptoHardware && !cfg.Open) {
			t.Errorf("%v: hardware key %v", in.Addr, in.HardwareKey)
		}
	}
	if cfg.Crypto == ap.CryptoHardware {
		kc := b.apRadio.KeyCache().(*wlantest.KeyCache)
		if kc.Used() != 3 {
			t.Errorf("%d key-cache slots used, want the GTK and two PTKs", kc.Used())
		}
		if b.apRadio.Decrypted == 0 {
			t.Error("the radio decrypted nothing")
		}
	} else if b.apRadio.Decrypted != 0 {
		t.Error("the radio decrypted with software crypto")
	}
	for i, r := range b.radios {
		if scfg.HardwareCrypto != (r.Decrypted != 0) {
			t.Errorf("station %d's radio decrypted %d frames (hardware crypto %v)", i, r.Decrypted, scfg.HardwareCrypto)
		}
	}
}

// checkAir checks the data frames on the air: protected unless the
// network is open, and from the AP exactly the Ethernet frames of the
// test (what a sniffer with the keys decrypts; tshark checks that too).
func checkAir(t *testing.T, b *bss, cfg ap.Config) {
	t.Helper()
	var data, prot int
	for _, f := range b.tap.frames {
		fr, err := wlan.Parse(f)
		if err != nil || fr.FC.Kind() != wlan.KindData {
			continue
		}
		data++
		if fr.FC.Protected() {
			prot++
		}
	}
	if data == 0 {
		t.Fatal("no data frames on the air")
	}
	if cfg.Open && prot != 0 {
		t.Errorf("open network: %d protected frames", prot)
	}
	// EAPOL messages 1 and 2 go unprotected; everything else after the
	// handshake is protected.
	if !cfg.Open && prot < data-8 {
		t.Errorf("%d of %d data frames protected", prot, data)
	}
}

// Beacons: every 100 TU, SSID, DS channel, RSN, TIM, and a TSF equal to
// the microseconds since the AP started.
func TestBeacons(t *testing.T) {
	b := newBSS(t, ap.Config{})
	start := b.m.Now()
	b.m.Run(time.Second)
	var n int
	var last time.Time
	for i, f := range b.tap.frames {
		fr, err := wlan.Parse(f)
		if err != nil || fr.FC.Kind() != wlan.KindBeacon {
			continue
		}
		n++
		bc, err := wlan.ParseBeacon(fr.Body)
		if err != nil {
			t.Fatal(err)
		}
		now := b.tap.times[i]
		if want := uint64(now.Sub(start).Microseconds()); bc.Timestamp != want {
			t.Errorf("beacon %d TSF %d, want %d", n, bc.Timestamp, want)
		}
		if n > 1 {
			if d := now.Sub(last); d < 102*time.Millisecond || d > 103*time.Millisecond {
				t.Errorf("beacon %d after %v, want 102.4 ms", n, d)
			}
		}
		last = now
		es, err := ie.Parse(bc.IEs)
		if err != nil {
			t.Fatal(err)
		}
		if string(es.SSID) != testSSID || es.RSN == nil || es.TIM == nil || len(es.DSParams) != 1 || es.DSParams[0] != 6 || bc.Interval != 100 {
			t.Fatalf("beacon elements %+v interval %d", es, bc.Interval)
		}
	}
	// 0, 102.4, ..., 921.6 ms: 10 beacons in the first second.
	if n != 10 {
		t.Errorf("%d beacons in 1 s, want 10", n)
	}
}

// A hidden network beacons an empty SSID, ignores wildcard probes, and
// a station that knows the SSID still joins with a directed probe.
func TestHiddenSSID(t *testing.T) {
	b := newBSS(t, ap.Config{Hidden: true}, testPassphrase)
	wild := wlan.AppendMgmtHeader(nil, wlan.KindProbeReq, 0, wlan.Broadcast, staAddr(9), wlan.Broadcast, 1)
	wild = ie.AppendSSID(wild, nil)
	wild = ie.AppendRates(wild, []byte{0x82})
	if err := b.m.Inject(wild); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Second)
	if b.stas[0].State() != sta.Authorized {
		t.Fatalf("station %v", b.stas[0].State())
	}
	var beacons int
	for _, f := range b.tap.frames {
		fr, _ := wlan.Parse(f)
		switch fr.FC.Kind() {
		case wlan.KindBeacon:
			bc, _ := wlan.ParseBeacon(fr.Body)
			es, _ := ie.Parse(bc.IEs)
			if es.SSID == nil || len(es.SSID) != 0 {
				t.Fatalf("hidden beacon SSID %q", es.SSID)
			}
			beacons++
		case wlan.KindProbeResp:
			if fr.Addr1 == staAddr(9) {
				t.Error("answered a wildcard probe")
			}
		}
	}
	if beacons == 0 {
		t.Error("no beacons")
	}
}

// (b) A wrong passphrase: the AP counts MIC failures, the station is
// never authorized, and no data frame of it reaches the DS.
func TestWrongPassphrase(t *testing.T) {
	b := newBSS(t, ap.Config{}, "wrong horse battery")
	b.m.Run(10 * time.Second)
	s := b.stas[0]
	if s.State() == sta.Authorized {
		t.Fatal("station authorized with a wrong passphrase")
	}
	if err := s.Send(ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)); err != sta.ErrNotAuthorized {
		t.Fatalf("Send: %v", err)
	}
	if b.ap.Stats.EAPOLMICFails.Load() == 0 || b.ap.MICFailures(staAddr(0)) == 0 {
		t.Error("no MIC failures counted")
	}
	if b.ap.Stats.HandshakeFails.Load() == 0 {
		t.Error("no failed handshake counted")
	}
	// Forge a plaintext data frame from the station while it is
	// associated (retry until it is, the AP kicks it out after failures).
	before := b.ap.Stats.Unauthorized.Load()
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindData, wlan.FlagToDS), Addr1: apAddr, Addr2: staAddr(0), Addr3: dsAddr}
	f := wlan.AppendHeader(nil, &h)
	f = append(f, 0xaa, 0xaa, 3, 0, 0, 0, 0x08, 0x00, 0x45)
	b.m.Inject(f)
	b.m.Run(time.Millisecond)
	if b.ap.Stats.Unauthorized.Load() == before {
		t.Error("unauthorized data frame not counted")
	}
	if len(b.toDS) != 0 || b.ap.Stats.RxData.Load() != 0 {
		t.Errorf("%d frames reached the DS", len(b.toDS))
	}
}

// (c) A CCMP frame replayed into the medium is dropped and counted, with
// crypto in software and in the key cache (whose decrypted frames the AP
// still checks against its replay counters).
func TestReplayDropped(t *testing.T) {
	t.Run("software", func(t *testing.T) { replayDropped(t, ap.Config{}) })
	t.Run("hardware", func(t *testing.T) { replayDropped(t, ap.Config{Crypto: ap.CryptoHardware}) })
}

func replayDropped(t *testing.T, cfg ap.Config) {
	b := newBSS(t, cfg, testPassphrase)
	b.m.Run(time.Second)
	if err := b.stas[0].Send(ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	var prot []byte
	for _, f := range b.tap.frames {
		fr, err := wlan.Parse(f)
		if err == nil && fr.FC.Kind() == wlan.KindData && fr.FC.Protected() && fr.FC.ToDS() {
			prot = f
		}
	}
	if prot == nil || len(b.toDS) != 1 {
		t.Fatalf("no protected frame sent (%d to DS)", len(b.toDS))
	}
	b.m.Inject(prot)
	b.m.Run(time.Millisecond)
	if got := b.ap.Stats.Replays.Load(); got != 1 {
		t.Errorf("replays %d, want 1", got)
	}
	if len(b.toDS) != 1 {
		t.Errorf("replayed frame reached the DS")
	}
	if cfg.Crypto == ap.CryptoHardware && b.apRadio.Decrypted < 2 {
		t.Errorf("the key cache decrypted %d frames; the replay must pass it", b.apRadio.Decrypted)
	}
	// A replayed group frame from the AP is dropped by the station.
	if err := b.ap.SendFromDS(ethARP(dsAddr, 1, 100)); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	var grp []byte
	for _, f := range b.tap.frames {
		fr, err := wlan.Parse(f)
		if err == nil && fr.FC.Kind() == wlan.KindData && fr.FC.Protected() && fr.FC.FromDS() && fr.Addr1.IsGroup() {
			grp = f
		}
	}
	if grp == nil || len(b.staRx[0]) != 1 {
		t.Fatalf("group frame not received (%d)", len(b.staRx[0]))
	}
	b.m.Inject(grp)
	b.m.Run(time.Millisecond)
	if len(b.staRx[0]) != 1 || b.stas[0].Stats.Replays.Load() != 1 {
		t.Errorf("replayed group frame: received %d, replays %d", len(b.staRx[0]), b.stas[0].Stats.Replays.Load())
	}
}

func authFrame(sa wlan.MAC, seq uint16) []byte {
	f := wlan.AppendMgmtHeader(nil, wlan.KindAuth, 0, apAddr, sa, apAddr, seq)
	a := wlan.Auth{Algorithm: wlan.AuthOpenSystem, Seq: 1}
	return a.Append(f)
}

// (d) The station table limit refuses the third station; a flood of
// authentications from random addresses keeps the table bounded and is
// rate-limited.
func TestTableLimitAndFlood(t *testing.T) {
	b := newBSS(t, ap.Config{MaxStations: 2}, testPassphrase, testPassphrase)
	b.m.Run(time.Second)
	third := b.addStation(t, 2, testPassphrase)
	b.m.Run(time.Second)
	if third.State() == sta.Authorized || third.State() >= sta.Handshaking {
		t.Errorf("third station %v with a table of 2", third.State())
	}
	if b.ap.Stats.TableFull.Load() == 0 {
		t.Error("refusals not counted")
	}
	for i := 0; i < 5000; i++ {
		sa := wlan.MAC{0x02, 0xf1, 0, byte(i >> 16), byte(i >> 8), byte(i)}
		b.m.Inject(authFrame(sa, uint16(i)))
		if i%100 == 0 {
			b.m.Run(time.Millisecond)
		}
		if n := len(b.ap.Stations()); n > 2 {
			t.Fatalf("table holds %d stations", n)
		}
	}
	b.m.Run(time.Second)
	if b.ap.Stats.RateLimited.Load() == 0 {
		t.Error("flood not rate limited")
	}
	for i := 0; i < 2; i++ {
		if b.stas[i].State() != sta.Authorized {
			t.Errorf("station %d lost: %v", i, b.stas[i].State())
		}
	}
}

// A room freed by a station's inactivity is taken by the next one; the
// inactive one is deauthenticated.
func TestInactivity(t *testing.T) {
	b := newBSS(t, ap.Config{MaxStations: 1, Inactivity: 2 * time.Second}, testPassphrase)
	b.m.Run(time.Second)
	b.m.Detach(b.radios[0].Port()) // the station leaves without a word
	b.m.Run(3 * time.Second)
	if b.ap.Stats.InactiveKicked.Load() != 1 || len(b.ap.Stations()) != 0 {
		t.Fatalf("kicked %d, table %+v", b.ap.Stats.InactiveKicked.Load(), b.ap.Stations())
	}
	s := b.addStation(t, 1, testPassphrase)
	b.m.Run(time.Second)
	if s.State() != sta.Authorized {
		t.Errorf("new station %v", s.State())
	}
}

// Stop deauthenticates every station.
func TestStopDeauths(t *testing.T) {
	b := newBSS(t, ap.Config{}, testPassphrase, testPassphrase)
	b.m.Run(time.Second)
	b.ap.Stop()
	b.m.Deliver()
	for i, s := range b.stas {
		if s.Stats.Deauths.Load() != 1 || s.State() == sta.Authorized {
			t.Errorf("station %d: deauths %d state %v", i, s.Stats.Deauths.Load(), s.State())
		}
	}
}

// nullFrame is a Null data frame from station i with the Power
// Management bit set or clear: how a station says it dozes or wakes.
func nullFrame(i int, dozing bool) []byte {
	flags := wlan.FlagToDS
	if dozing {
		flags |= wlan.FlagPwrMgt
	}
	h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindNull, flags), Addr1: apAddr, Addr2: staAddr(i), Addr3: apAddr}
	return wlan.AppendHeader(nil, &h)
}

// lastTIM returns the TIM element body of the last beacon on the air.
func lastTIM(t *testing.T, b *bss) []byte {
	for i := len(b.tap.frames) - 1; i >= 0; i-- {
		fr, _ := wlan.Parse(b.tap.frames[i])
		if fr.FC.Kind() == wlan.KindBeacon {
			bc, _ := wlan.ParseBeacon(fr.Body)
			es, err := ie.Parse(bc.IEs)
			if err != nil {
				t.Fatal(err)
			}
			return es.TIM
		}
	}
	t.Fatal("no beacon")
	return nil
}

// Power save: frames for a dozing station are buffered and its AID
// shows in the TIM; when it wakes they are delivered.
func TestPowerSaveTIM(t *testing.T) {
	b := newBSS(t, ap.Config{}, testPassphrase, testPassphrase)
	b.m.Run(time.Second)
	aid := b.stas[1].AID()
	b.m.Inject(nullFrame(1, true))
	b.m.Deliver()
	eth := ethICMP(staAddr(1), dsAddr, 1, 101, 0, 1)
	if err := b.ap.SendFromDS(eth); err != nil {
		t.Fatal(err)
	}
	b.m.Run(110 * time.Millisecond)
	if len(b.staRx[1]) != 0 || b.ap.Stats.PSBuffered.Load() != 1 {
		t.Fatalf("frame not buffered: %x", b.staRx[1])
	}
	tim := lastTIM(t, b)
	// TIM body: DTIM count, period, bitmap control (offset N1/2 in bits
	// 1-7), partial virtual bitmap from octet N1 (802.11-2016 9.4.2.6).
	n1 := int(tim[2] & 0xfe)
	if bit := int(aid) - 8*n1; bit < 0 || len(tim) <= 3+bit/8 || tim[3+bit/8]&(1<<(bit%8)) == 0 {
		t.Fatalf("AID %d not in TIM %x", aid, tim)
	}
	b.m.Inject(nullFrame(1, false))
	b.m.Run(110 * time.Millisecond)
	if len(b.staRx[1]) != 1 || !bytes.Equal(b.staRx[1][0], eth) {
		t.Fatalf("after waking: %x", b.staRx[1])
	}
	if tim := lastTIM(t, b); len(tim) != 4 || tim[3] != 0 {
		t.Errorf("TIM still set: %x", tim)
	}
}

// A configuration change deauthenticates every station; they rejoin the
// new network if they know it.
func TestReconfigureDeauths(t *testing.T) {
	t.Run("software", func(t *testing.T) { reconfigureDeauths(t, ap.Config{}) })
	t.Run("hardware", func(t *testing.T) { reconfigureDeauths(t, ap.Config{Crypto: ap.CryptoHardware}) })
}

func reconfigureDeauths(t *testing.T, cfg ap.Config) {
	b := newBSS(t, cfg, testPassphrase)
	b.m.Run(time.Second)
	if err := b.ap.Reconfigure(ap.Config{BSSID: apAddr, SSID: testSSID, Passphrase: "another passphrase", Channel: 11, Crypto: cfg.Crypto}, b.m.Now()); err != nil {
		t.Fatal(err)
	}
	b.m.Run(2 * time.Second)
	s := b.stas[0]
	if s.Stats.Deauths.Load() == 0 || s.State() == sta.Authorized {
		t.Errorf("station after reconfigure: deauths %d, %v", s.Stats.Deauths.Load(), s.State())
	}
	if got := b.ap.Stats.EAPOLMICFails.Load(); got == 0 {
		t.Error("old passphrase not refused by the new configuration")
	}
	if cfg.Crypto == ap.CryptoHardware {
		// The old keys left the cache; only the new GTK is there.
		if n := b.apRadio.KeyCache().(*wlantest.KeyCache).Used(); n != 1 {
			t.Errorf("%d key-cache slots used after reconfigure, want 1", n)
		}
	}
}
