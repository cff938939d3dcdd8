package ht

import (
	"bytes"
	"testing"

	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/wpa"
)

// An A-MSDU of an IPv4 subframe, an EAPOL one (never inside an A-MSDU)
// and an ARP one yields the two bridgeable ones; a cut-off last
// subframe counts as bad; an A-MSDU whose first DA is the LLC/SNAP
// header is refused whole.
func TestMSDUs(t *testing.T) {
	da, sa := wlan.MAC{2, 0, 0, 0, 0, 1}, wlan.MAC{2, 0, 0, 0, 0, 2}
	var body []byte
	body = wlan.AppendAMSDUSubframe(body, 0, da, sa, wlan.AppendMSDU(nil, 0x0800, []byte("ipv4")))
	body = wlan.AppendAMSDUSubframe(body, 0, da, sa, wlan.AppendMSDU(nil, wpa.EtherTypeEAPOL, []byte("eapol")))
	body = wlan.AppendAMSDUSubframe(body, 0, da, sa, wlan.AppendMSDU(nil, 0x0806, []byte("arp")))
	m, ok := OpenAMSDU(body)
	if !ok {
		t.Fatal("refused")
	}
	var types []uint16
	for {
		sub, et, p, ok := m.Next()
		if !ok {
			break
		}
		if sub.DA != da || sub.SA != sa || !bytes.Equal(p, map[uint16][]byte{0x0800: []byte("ipv4"), 0x0806: []byte("arp")}[et]) {
			t.Errorf("subframe %+v type %#x payload %q", sub, et, p)
		}
		types = append(types, et)
	}
	if len(types) != 2 || types[0] != 0x0800 || types[1] != 0x0806 || m.Bad != 1 {
		t.Errorf("types %x bad %d, want [800 806] and 1 (EAPOL)", types, m.Bad)
	}
	m, _ = OpenAMSDU(body[:len(body)-2])
	for {
		if _, _, _, ok := m.Next(); !ok {
			break
		}
	}
	if m.Bad != 2 {
		t.Errorf("cut-off A-MSDU: bad %d, want 2 (EAPOL, truncated)", m.Bad)
	}
	mimic := append(LLCMimicDA[:], body[6:]...)
	if _, ok := OpenAMSDU(mimic); ok {
		t.Error("LLC-mimic A-MSDU accepted")
	}
}
