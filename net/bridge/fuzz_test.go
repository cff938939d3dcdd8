package bridge

import (
	"bytes"
	"encoding/binary"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
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

// FuzzHostTransmit: a frame from the host port, in segments cut at two
// arbitrary points, has the same effect as the same frame fed to Input
// flat: the same frames leave through the same ports, and the counters
// agree. The host's lent path (inputFromHost) must be Input's shortcut,
// never a bridge of its own.
func FuzzHostTransmit(f *testing.F) {
	f.Add(uint16(20), uint16(60), frame(stA, brMAC, -1, 0, 300))
	f.Add(uint16(14), uint16(14), frame(stB, brMAC, -1, 0, 46))
	f.Add(uint16(0), uint16(1), frame(stC, brMAC, -1, 0, 46))
	f.Add(uint16(30), uint16(31), frame(bcast, brMAC, -1, 0, 100))
	f.Add(uint16(16), uint16(40), frame(stA, brMAC, 1, 0, 100))
	f.Add(uint16(16), uint16(40), frame(stA, brMAC, 10, 0, 100))
	f.Add(uint16(5), uint16(9), frame(brMAC, stA, -1, 0, 46))
	f.Add(uint16(12), uint16(13), frame(stA, brMAC, -1, 0, 46)[:13])
	f.Add(uint16(54), uint16(800), frame(stA, brMAC, -1, 0, 1501))
	f.Add(uint16(54), uint16(800), frame(stA, stA, -1, 0, 1500))
	f.Fuzz(func(t *testing.T, cut1, cut2 uint16, fr []byte) {
		type side struct {
			b         *Bridge
			hn        *HostNIC
			gat, flat *copyNIC
		}
		mk := func() side {
			b, _ := New(Config{MAC: brMAC, FloodRate: -1})
			hn, err := b.AddHostPort(PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}})
			if err != nil {
				t.Fatal(err)
			}
			if err := hn.Start(nullHandler{}); err != nil {
				t.Fatal(err)
			}
			s := side{b: b, hn: hn, gat: &copyNIC{caps: gnet.CapScatterGather}, flat: &copyNIC{}}
			if _, err := b.AttachNIC(s.gat, PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.AttachNIC(s.flat, DefaultVLANs); err != nil {
				t.Fatal(err)
			}
			s.gat.h.Receive(frame(bcast, stA, -1, 0, 46))
			s.flat.h.Receive(frame(bcast, stB, -1, 0, 46))
			s.gat.n, s.flat.n = 0, 0
			return s
		}
		lent, flat := mk(), mk()
		a, z := min(int(cut1), len(fr)), min(int(cut2), len(fr))
		if a > z {
			a, z = z, a
		}
		var segs [][]byte
		for _, s := range [][]byte{fr[:a], fr[a:z], fr[z:]} {
			if len(s) > 0 {
				segs = append(segs, s)
			}
		}
		err := lent.hn.Transmit(&listTx{segs: segs})
		if len(fr) == 0 || len(fr) > gnet.RxBufSize {
			if err == nil {
				t.Fatalf("a %d-byte frame accepted", len(fr))
			}
			return
		}
		flat.b.Input(flat.hn.port, fr)
		for i, pair := range [][2]*copyNIC{{lent.gat, flat.gat}, {lent.flat, flat.flat}} {
			if pair[0].n != pair[1].n || !bytes.Equal(pair[0].last, pair[1].last) {
				t.Fatalf("port %d: lent path sent %d frames (%x), Input %d (%x)", i, pair[0].n, pair[0].last, pair[1].n, pair[1].last)
			}
		}
		for p := 0; p < 3; p++ {
			x, y := lent.b.PortStats(p), flat.b.PortStats(p)
			if x.RxFrames.Load() != y.RxFrames.Load() || x.RxBytes.Load() != y.RxBytes.Load() ||
				x.Forwarded.Load() != y.Forwarded.Load() || x.Flooded.Load() != y.Flooded.Load() ||
				x.TxFrames.Load() != y.TxFrames.Load() || x.TxBytes.Load() != y.TxBytes.Load() {
				t.Fatalf("port %d counters differ", p)
			}
		}
		for r := Reason(0); r < numReasons; r++ {
			if lent.b.Stats.Dropped(r) != flat.b.Stats.Dropped(r) {
				t.Fatalf("%v drops differ: %d and %d", r, lent.b.Stats.Dropped(r), flat.b.Stats.Dropped(r))
			}
		}
	})
}
