package txq

import (
	"encoding/binary"
	"testing"

	"github.com/gowrt/gowrt/wlan/ccmp"
	"github.com/gowrt/gowrt/wlan/radio"
)

// With software crypto (StationConfig.Seal) each MPDU is sealed once,
// when first handed to the radio, in sequence order: PNs rise with
// sequence numbers even when retransmissions go out later in other
// aggregates, and a retransmission keeps its PN (802.11-2016 12.5.3.4.4
// checks the PN after reordering).
func TestSealAtFirstDequeue(t *testing.T) {
	fr := &fakeRadio{reqs: make([]*radio.TxRequest, 0, 64)}
	c := &clock{}
	s, err := New(Config{Radio: fr, Own: apMAC, Caps: htCaps, Now: c.now, Buffers: 600})
	if err != nil {
		t.Fatal(err)
	}
	var pn uint64
	pnOf := map[uint16]uint64{} // sequence number → PN sealed with
	seal := func(m []byte) error {
		if m[1]&0x40 == 0 || len(m) < 26+ccmp.Overhead {
			t.Fatalf("unprotected or without room: %x", m[:2])
		}
		seq := binary.LittleEndian.Uint16(m[22:]) >> 4
		if _, again := pnOf[seq]; again {
			t.Fatalf("sequence number %d sealed twice", seq)
		}
		pn++
		pnOf[seq] = pn
		binary.LittleEndian.PutUint64(m[26:], pn) // stands for the CCMP header
		return nil
	}
	st, err := s.AddStation(StationConfig{BAWindow: 64, Addr: staMAC, Caps: htCaps, Key: radio.NoKey, Seal: seal})
	if err != nil {
		t.Fatal(err)
	}
	enqueueN(t, s, st, 100, 1500)
	if fr.reqs[0].Key != radio.NoKey {
		t.Fatalf("key %d for sealed frames", fr.reqs[0].Key)
	}
	lost := map[uint16]int{}
	for len(fr.reqs) > 0 {
		r := fr.reqs[0]
		for _, m := range r.MPDUs {
			if len(m) < 24 {
				continue // a BlockAckReq
			}
			seq := binary.LittleEndian.Uint16(m[22:]) >> 4
			if got := binary.LittleEndian.Uint64(m[26:]); got != pnOf[seq] {
				t.Fatalf("sequence number %d went out with PN %d, sealed with %d", seq, got, pnOf[seq])
			}
		}
		// Every third frame is lost once, and goes again later.
		fr.complete(func(seq uint16) bool {
			lost[seq]++
			return seq%3 != 0 || lost[seq] > 1
		})
	}
	for seq := uint16(1); seq < 100; seq++ {
		if pnOf[seq] <= pnOf[seq-1] {
			t.Fatalf("PN %d of sequence number %d not above %d", pnOf[seq], seq, pnOf[seq-1])
		}
	}
	if got := s.Stats(st); got.Acked != 100 || got.Retries == 0 {
		t.Errorf("stats %+v", got)
	}
}
