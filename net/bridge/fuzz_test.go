package bridge

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	f.Add(byte(0), []byte{})
	f.Add(byte(0), frame(bcast, stA, -1, 0, 46))
	f.Add(byte(1), frame(stA, stB, 10, 5, 46))
	f.Add(byte(1), frame(bcast, stB, 20, 0, 1500))
	f.Add(byte(2), frame(stB, stA, 0, 3, 10))
	f.Add(byte(0), frame(bcast, stA, 0xfff, 0, 46))
	f.Add(byte(0), frame(bcast, stA, -1, 0, 1501))
	f.Add(byte(0), frame(bcast, stA, 10, 0, 46)[:17])
	f.Add(byte(0), frame(bcast, stA, 10, 0, 46)[:13])
	f.Add(byte(0), frame(gnetMAC(0x01, 0x80, 0xc2, 0, 0, 0), stA, -1, 0, 46))
	f.Add(byte(3), frame(brMAC, stA, -1, 0, 46))
	f.Add(byte(0), frame(bcast, brMAC, -1, 0, 46))
	qinq := frame(bcast, stA, 10, 0, 46)
	binary.BigEndian.PutUint16(qinq[16:], tpid8021Q)
	f.Add(byte(1), qinq)
}

// FuzzParse: Parse never panics, and what it accepts is self-consistent.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, _ byte, b []byte) {
		fr, r, ok := Parse(b, 1500)
		if !ok {
			if r >= numReasons {
				t.Fatalf("bad reason %d", r)
			}
			return
		}
		if len(b) < fr.Rest+2 || len(b) > fr.Rest+2+1500+tagLen {
			t.Fatalf("accepted %d-byte frame with Rest %d", len(b), fr.Rest)
		}
		if fr.Tagged != (fr.Rest == 16) || (fr.Tagged && fr.VID() == vidReserved) {
			t.Fatalf("inconsistent tag: %+v", fr)
		}
		if b[6]&1 != 0 {
			t.Fatal("accepted multicast source")
		}
		if fr.EtherType > maxLenField && fr.EtherType < minTypeField {
			t.Fatalf("accepted type/length %#x", fr.EtherType)
		}
	})
}

// FuzzBridgeInput: arbitrary frames on arbitrary ports of a VLAN-mixed
// bridge never panic, never leave through their ingress port, and every
// frame that leaves is well-formed, keeps its addresses and fits the MTU.
func FuzzBridgeInput(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, port byte, b []byte) {
		r := newRig(t,
			PortVLANs{PVID: 10, Untagged: []uint16{10}},
			PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10, 20}},
			DefaultVLANs,
			PortVLANs{Tagged: []uint16{20}})
		in := int(port % 5) // 4 = no such port
		r.b.Input(in, b)
		r.b.Input(in, b) // second time: the source may now be learned
		for o, l := range r.links {
			for _, out := range l.take() {
				if o == in {
					t.Fatalf("frame left through its ingress port %d", in)
				}
				if _, reason, ok := Parse(out, 1500); !ok {
					t.Fatalf("emitted malformed frame (%v): %x", reason, out)
				}
				if !bytes.Equal(out[:12], b[:12]) {
					t.Fatalf("addresses changed: %x -> %x", b[:12], out[:12])
				}
			}
		}
	})
}
