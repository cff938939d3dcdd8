package ap_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/ie"
	"github.com/gowrt/gowrt/wlan/sta"
	"github.com/gowrt/gowrt/wlan/wlantest"
)

// Periodic GTK rekey: the group key handshake moves both stations to the
// new key (the other key ID) and broadcasts keep arriving; a station that
// stops answering is deauthenticated at the next rekey, the other keeps
// its place.
func TestGroupRekey(t *testing.T) {
	for _, cfg := range []ap.Config{{GroupRekey: 5 * time.Second}, {GroupRekey: 5 * time.Second, Crypto: ap.CryptoHardware}} {
		t.Run(cfg.Crypto.String(), func(t *testing.T) { groupRekey(t, cfg, false) })
	}
	t.Run("hardware-both-ends", func(t *testing.T) {
		groupRekey(t, ap.Config{GroupRekey: 5 * time.Second, Crypto: ap.CryptoHardware}, true)
	})
}

func groupRekey(t *testing.T, cfg ap.Config, staHW bool) {
	b := newBSS(t, cfg)
	for i := 0; i < 2; i++ {
		b.addStationConfig(t, i, sta.Config{Passphrase: testPassphrase, HardwareCrypto: staHW})
	}
	b.m.Run(time.Second)
	if id := b.ap.GroupKeyID(); id != 1 {
		t.Fatalf("GTK key ID %d, want 1", id)
	}
	bcast := func(n int) {
		t.Helper()
		arp := ethARP(dsAddr, 1, byte(n))
		if err := b.ap.SendFromDS(arp); err != nil {
			t.Fatal(err)
		}
		b.m.Run(time.Millisecond)
	}
	bcast(1)
	b.m.Run(4500 * time.Millisecond) // past the 5 s rekey
	if got := b.ap.Stats.GroupRekeys.Load(); got != 1 {
		t.Fatalf("%d rekeys after 5.5 s, want 1", got)
	}
	if id := b.ap.GroupKeyID(); id != 2 {
		t.Fatalf("GTK key ID %d after the rekey, want 2", id)
	}
	bcast(2)
	for i := range b.stas {
		if len(b.staRx[i]) != 2 {
			t.Fatalf("station %d got %d broadcasts, want 2 (one per GTK)", i, len(b.staRx[i]))
		}
	}
	// Station 1 goes deaf to the AP: the next group key handshake with
	// it times out after 4 tries and it is deauthenticated.
	b.m.SetLoss(b.apRadio.Port(), b.radios[1].Port(), 1)
	b.m.Run(9 * time.Second) // rekey at 10 s, tries at 10..13 s, gives up at 14 s
	if got := b.ap.Stats.GroupRekeys.Load(); got != 2 {
		t.Fatalf("%d rekeys, want 2", got)
	}
	infos := b.ap.Stations()
	if len(infos) != 1 || infos[0].Addr != staAddr(0) || !infos[0].Authorized {
		t.Fatalf("stations after an unanswered group handshake: %+v", infos)
	}
	if b.ap.Stats.HandshakeFails.Load() != 1 {
		t.Errorf("handshake failures %d, want 1", b.ap.Stats.HandshakeFails.Load())
	}
	if id := b.ap.GroupKeyID(); id != 1 {
		t.Errorf("GTK key ID %d after the second rekey, want 1", id)
	}
	bcast(3)
	if len(b.staRx[0]) != 3 {
		t.Errorf("station 0 got %d broadcasts, want 3", len(b.staRx[0]))
	}
}

var behind = wlan.MAC{0x02, 0xbe, 0, 0, 0, 1} // a host on the LAN behind station 0

// 4-address mode: station 0 bridges a LAN; the AP learns the host behind
// it from A4, sends its frames with four addresses, relays a 3-address
// station's frames to it, gives it group frames as 4-address unicast and
// never sends its own group frames back to it.
func TestWDS(t *testing.T) {
	b := newBSS(t, ap.Config{WDS: true})
	b.addStationConfig(t, 0, sta.Config{Passphrase: testPassphrase, WDS: true})
	b.addStationConfig(t, 1, sta.Config{Passphrase: testPassphrase})
	b.m.Run(time.Second)
	s0, s1 := b.stas[0], b.stas[1]
	toDS := ethICMP(dsAddr, behind, 50, 1, 8, 1)
	if err := s0.Send(toDS); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if len(b.toDS) != 1 || !bytes.Equal(b.toDS[0], toDS) {
		t.Fatalf("DS got %x\nwant %x", b.toDS, toDS)
	}
	var wds bool
	for _, in := range b.ap.Stations() {
		if in.Addr == staAddr(0) {
			wds = in.WDS && in.Behind == 1
		}
	}
	if !wds {
		t.Fatalf("station 0 not seen as 4-address with one host behind: %+v", b.ap.Stations())
	}
	fromDS := ethICMP(behind, dsAddr, 1, 50, 0, 1)
	if err := b.ap.SendFromDS(fromDS); err != nil {
		t.Fatal(err)
	}
	s1toBehind := ethICMP(behind, staAddr(1), 101, 50, 8, 2)
	if err := s1.Send(s1toBehind); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if len(b.staRx[0]) != 2 || !bytes.Equal(b.staRx[0][0], fromDS) || !bytes.Equal(b.staRx[0][1], s1toBehind) {
		t.Fatalf("station 0 got %x", b.staRx[0])
	}
	// The frames to station 0 had four addresses.
	var four int
	for _, f := range b.tap.frames {
		if h, err := wlan.ParseHeader(f); err == nil && h.FC.Kind() == wlan.KindData && h.FC.ToDS() && h.FC.FromDS() && h.Addr2 == apAddr {
			four++
		}
	}
	if four < 2 {
		t.Errorf("%d 4-address frames from the AP", four)
	}
	// A broadcast from behind station 0: to the DS and station 1, not
	// back to station 0; a broadcast from the DS: to both.
	b.staRx[0], b.staRx[1], b.toDS = nil, nil, nil
	arp := ethARP(behind, 50, 1)
	if err := s0.Send(arp); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if len(b.toDS) != 1 || len(b.staRx[1]) != 1 || len(b.staRx[0]) != 0 {
		t.Fatalf("broadcast from behind station 0: DS %d, station 1 %d, station 0 %d", len(b.toDS), len(b.staRx[1]), len(b.staRx[0]))
	}
	dsARP := ethARP(dsAddr, 1, 50)
	if err := b.ap.SendFromDS(dsARP); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if len(b.staRx[0]) != 1 || !bytes.Equal(b.staRx[0][0], dsARP) || len(b.staRx[1]) != 2 {
		t.Fatalf("broadcast from the DS: station 0 %x, station 1 %d", b.staRx[0], len(b.staRx[1]))
	}
}

// Without Config.WDS, 4-address frames are dropped and counted; the
// learned table is bounded.
func TestWDSRefusedAndBounded(t *testing.T) {
	b := newBSS(t, ap.Config{})
	b.addStationConfig(t, 0, sta.Config{Passphrase: testPassphrase, WDS: true})
	b.m.Run(time.Second)
	if err := b.stas[0].Send(ethICMP(dsAddr, behind, 50, 1, 8, 1)); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if len(b.toDS) != 0 || b.ap.Stats.WDSRefused.Load() == 0 {
		t.Fatalf("4-address frame without WDS: %d to DS, refused %d", len(b.toDS), b.ap.Stats.WDSRefused.Load())
	}

	b = newBSS(t, ap.Config{WDS: true, MaxBehind: 16})
	b.addStationConfig(t, 0, sta.Config{Passphrase: testPassphrase, WDS: true})
	b.m.Run(time.Second)
	b.discardDS = true
	for i := 0; i < 300; i++ {
		src := wlan.MAC{0x02, 0xbe, 0, 0, byte(i >> 8), byte(i)}
		if err := b.stas[0].Send(ethICMP(dsAddr, src, 50, 1, 8, 1)); err != nil {
			t.Fatal(err)
		}
		b.m.Deliver()
	}
	if n := b.ap.Stations()[0].Behind; n != 16 {
		t.Errorf("%d addresses learned, want the bound 16", n)
	}
	if b.ap.Stats.WDSFull.Load() != 300-16 {
		t.Errorf("WDSFull %d", b.ap.Stats.WDSFull.Load())
	}
	if b.ap.Stats.RxData.Load() != 300 {
		t.Errorf("%d frames to the DS, want all 300", b.ap.Stats.RxData.Load())
	}
}

// VLAN: frames to the DS carry the VID; only frames tagged with it are
// taken from the DS, untagged on the air.
func TestVLAN(t *testing.T) {
	b := newBSS(t, ap.Config{VLAN: 10}, testPassphrase)
	b.m.Run(time.Second)
	eth := ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)
	if err := b.stas[0].Send(eth); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	tagged := tag(eth, 10)
	if len(b.toDS) != 1 || !bytes.Equal(b.toDS[0], tagged) {
		t.Fatalf("DS got %x\nwant %x", b.toDS, tagged)
	}
	back := ethICMP(staAddr(0), dsAddr, 1, 100, 0, 1)
	for _, f := range [][]byte{back, tag(back, 11)} {
		if err := b.ap.SendFromDS(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.ap.SendFromDS(tag(back, 10)); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	if b.ap.Stats.WrongVLAN.Load() != 2 || len(b.staRx[0]) != 1 || !bytes.Equal(b.staRx[0][0], back) {
		t.Fatalf("wrong VLAN %d, station got %x", b.ap.Stats.WrongVLAN.Load(), b.staRx[0])
	}
	if _, err := ap.New(ap.Config{SSID: "x", Open: true, VLAN: 4095}); err != ap.ErrVLAN {
		t.Errorf("VID 4095: %v", err)
	}
}

func tag(eth []byte, vid uint16) []byte {
	out := append([]byte{}, eth[:12]...)
	out = binary.BigEndian.AppendUint16(out, 0x8100)
	out = binary.BigEndian.AppendUint16(out, vid)
	return append(out, eth[12:]...)
}

// Bad input with the key cache too: a station with the wrong passphrase
// never gets a frame to the DS and no key reaches the cache.
func TestWrongPassphraseHardware(t *testing.T) {
	b := newBSS(t, ap.Config{Crypto: ap.CryptoHardware}, "wrong horse battery")
	b.m.Run(5 * time.Second)
	if b.stas[0].State() == sta.Authorized || b.ap.Stats.EAPOLMICFails.Load() == 0 {
		t.Fatalf("station %v, MIC failures %d", b.stas[0].State(), b.ap.Stats.EAPOLMICFails.Load())
	}
	if n := b.apRadio.KeyCache().(*wlantest.KeyCache).Used(); n != 1 {
		t.Errorf("%d key-cache slots used, want only the GTK", n)
	}
	if len(b.toDS) != 0 {
		t.Errorf("%d frames reached the DS", len(b.toDS))
	}
}

// An association and deauthentication flood from spoofed addresses: the
// table stays bounded, association requests are rate-limited (so the
// AP's deauthentication answers to unauthenticated senders are too),
// and the real station keeps its place.
func TestAssocDeauthFlood(t *testing.T) {
	b := newBSS(t, ap.Config{MaxStations: 3}, testPassphrase)
	b.m.Run(time.Second)
	sentBefore := b.ap.Stats.Deauths.Load()
	for i := 0; i < 3000; i++ {
		sa := wlan.MAC{0x02, 0xf2, 0, byte(i >> 16), byte(i >> 8), byte(i)}
		req := wlan.AssocReq{Capability: wlan.CapESS | wlan.CapPrivacy, ListenInterval: 10, IEs: ie.AppendSSID(nil, []byte(testSSID))}
		f := req.Append(wlan.AppendMgmtHeader(nil, wlan.KindAssocReq, 0, apAddr, sa, apAddr, uint16(i)), false)
		b.m.Inject(f)
		d := wlan.AppendReason(wlan.AppendMgmtHeader(nil, wlan.KindDeauth, 0, apAddr, sa, apAddr, uint16(i)), wlan.ReasonDeauthLeaving)
		b.m.Inject(d)
		if i%100 == 0 {
			b.m.Run(time.Millisecond)
		}
		if n := len(b.ap.Stations()); n > 3 {
			t.Fatalf("table holds %d stations", n)
		}
	}
	b.m.Run(time.Second)
	if b.ap.Stats.RateLimited.Load() == 0 {
		t.Error("association flood not rate-limited")
	}
	// At most a second's burst plus the refill are answered.
	if sent := b.ap.Stats.Deauths.Load() - sentBefore; sent > 2*ap.DefaultMgmtRate {
		t.Errorf("%d deauthentications sent in answer to a flood", sent)
	}
	if b.stas[0].State() != sta.Authorized {
		t.Errorf("station lost: %v", b.stas[0].State())
	}
}

// A key cache too small for every station: the first station's PTK goes
// into the cache, the second one's stays in software (the radio hands
// its frames up undecrypted and sends what the AP encrypted), and both
// exchange frames. A radio with no key cache at all cannot run hardware
// crypto.
func TestKeyCacheFull(t *testing.T) {
	// Slots 0..3 hold group keys; slot 4 is AID 1's.
	b := newBSSSlots(t, ap.Config{Crypto: ap.CryptoHardware}, 5, testPassphrase)
	b.m.Run(time.Second)
	b.addStation(t, 1, testPassphrase)
	b.m.Run(time.Second)
	hw := map[wlan.MAC]bool{}
	for _, in := range b.ap.Stations() {
		hw[in.Addr] = in.HardwareKey
	}
	if !hw[staAddr(0)] || hw[staAddr(1)] || len(hw) != 2 {
		t.Fatalf("hardware keys %v: want station 0 only", hw)
	}
	for i := 0; i < 2; i++ {
		eth := ethICMP(dsAddr, staAddr(i), byte(100+i), 1, 8, 1)
		if err := b.stas[i].Send(eth); err != nil {
			t.Fatal(err)
		}
		back := ethICMP(staAddr(i), dsAddr, 1, byte(100+i), 0, 1)
		if err := b.ap.SendFromDS(back); err != nil {
			t.Fatal(err)
		}
	}
	b.m.Run(time.Millisecond)
	if len(b.toDS) != 2 || len(b.staRx[0]) != 1 || len(b.staRx[1]) != 1 {
		t.Fatalf("to DS %d, station 0 %d, station 1 %d", len(b.toDS), len(b.staRx[0]), len(b.staRx[1]))
	}

	a, err := ap.New(ap.Config{SSID: "x", Passphrase: testPassphrase, Crypto: ap.CryptoHardware})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(wlantest.NewRadio(b.m, wlantest.RadioConfig{Addr: wlan.MAC{2, 9, 9, 9, 9, 9}}), b.m.Now()); err != ap.ErrNoKeyCache {
		t.Errorf("hardware crypto without a key cache: %v", err)
	}
}

// A frame sent again with the Retry bit (its ACK was lost) is a duplicate
// and dropped before it reaches CCMP (which would count it as a replay)
// or the DS; the same bytes without the Retry bit are a replay.
func TestDuplicateDetection(t *testing.T) {
	b := newBSS(t, ap.Config{}, testPassphrase)
	b.m.Run(time.Second)
	if err := b.stas[0].Send(ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)); err != nil {
		t.Fatal(err)
	}
	b.m.Run(time.Millisecond)
	var last []byte
	for _, f := range b.tap.frames {
		if h, err := wlan.ParseHeader(f); err == nil && h.FC.Kind() == wlan.KindData && h.FC.Protected() && h.FC.ToDS() {
			last = f
		}
	}
	if last == nil || len(b.toDS) != 1 {
		t.Fatalf("no frame to retransmit (%d to the DS)", len(b.toDS))
	}
	retry := append([]byte{}, last...)
	retry[1] |= byte(wlan.FlagRetry >> 8)
	b.m.Inject(retry)
	b.m.Run(time.Millisecond)
	if b.ap.Stats.Duplicates.Load() != 1 || b.ap.Stats.Replays.Load() != 0 || len(b.toDS) != 1 {
		t.Fatalf("retransmission: duplicates %d, replays %d, to DS %d", b.ap.Stats.Duplicates.Load(), b.ap.Stats.Replays.Load(), len(b.toDS))
	}
	b.m.Inject(last)
	b.m.Run(time.Millisecond)
	if b.ap.Stats.Duplicates.Load() != 1 || b.ap.Stats.Replays.Load() != 1 || len(b.toDS) != 1 {
		t.Fatalf("replay: duplicates %d, replays %d, to DS %d", b.ap.Stats.Duplicates.Load(), b.ap.Stats.Replays.Load(), len(b.toDS))
	}
}
