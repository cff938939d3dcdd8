package ap_test

import (
	"testing"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ap"
	"github.com/gowrt/gowrt/wlan/sta"
)

// A-MSDUs from an HT station: each subframe reaches the DS; one whose
// first subframe's DA is an LLC/SNAP header (a plain MSDU whose A-MSDU
// Present bit was flipped, the FragAttacks injection) is dropped whole.
func TestHTAMSDUReceive(t *testing.T) {
	b := newHTBSS(t, ap.Config{Open: true}, sta.Config{})
	qos := func(seq uint16, body []byte) []byte {
		h := wlan.Header{FC: wlan.NewFrameControl(wlan.KindQoSData, wlan.FlagToDS), Addr1: apAddr, Addr2: staAddr(0), Addr3: apAddr,
			Seq: wlan.NewSeqControl(seq, 0), QoS: wlan.NewQoSControl(5, wlan.AckNormal, true, false)}
		return append(wlan.AppendHeader(nil, &h), body...)
	}
	ip := ethICMP(dsAddr, staAddr(0), 100, 1, 8, 1)[14:]
	var body []byte
	for i := 0; i < 3; i++ {
		body = wlan.AppendAMSDUSubframe(body, 0, dsAddr, staAddr(0), wlan.AppendMSDU(nil, 0x0800, ip))
	}
	before, amsdus := b.toDS, b.ap.Stats.RxAMSDU.Load()
	b.ap.Receive(qos(100, body), nil)
	if b.toDS-before != 3 || b.ap.Stats.RxAMSDU.Load() != amsdus+1 {
		t.Fatalf("%d MSDUs to the DS from a 3-subframe A-MSDU", b.toDS-before)
	}
	// What an attacker gets from a plain MSDU with the bit flipped: its
	// LLC/SNAP header read as the first subframe's DA; the rest chosen to
	// parse as a subframe (the FragAttacks injection).
	bad := wlan.AppendAMSDUSubframe(nil, 0, wlan.MAC{0xaa, 0xaa, 0x03, 0, 0, 0}, staAddr(0), wlan.AppendMSDU(nil, 0x0800, ip))
	malformed := b.ap.Stats.Malformed.Load()
	b.ap.Receive(qos(101, bad), nil)
	if b.toDS-before != 3 || b.ap.Stats.Malformed.Load() != malformed+1 {
		t.Errorf("LLC-mimic A-MSDU: %d frames to the DS, malformed %d", b.toDS-before-3, b.ap.Stats.Malformed.Load()-malformed)
	}
}
