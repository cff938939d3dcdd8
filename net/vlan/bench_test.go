package vlan_test

import (
	"fmt"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/vlan"
)

// The benchmarks run each case twice: "direct", the parent NIC handing
// the frame straight to a handler (receive) or taking the child's TxBuf
// as it is (transmit), and "vlan", the same through a trunk. The ratio of
// the two is the trunk's cost. The parent is syncNIC: it calls the
// handler in the benchmark's goroutine and releases at once, so nothing
// but the trunk is measured.

var benchSizes = []int{60, 1514}

func benchFrame(size int, tagged bool) []byte {
	f := make([]byte, size)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00})
	if tagged {
		f = append(f[:12], append([]byte{0x81, 0x00, 0x00, 0x02}, f[12:]...)...)
	}
	return f
}

func BenchmarkReceive(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("direct/%d", size), func(b *testing.B) {
			n := &syncNIC{}
			s := &sink{}
			if err := n.Start(s); err != nil {
				b.Fatal(err)
			}
			f := benchFrame(size, false)
			var h gnet.Handler = n.h
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				h.Receive(f)
			}
			if s.n == 0 {
				b.Fatal("nothing received")
			}
		})
		b.Run(fmt.Sprintf("vlan/%d", size), func(b *testing.B) {
			n := &syncNIC{}
			tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2}})
			if err != nil {
				b.Fatal(err)
			}
			p, _ := tr.Port(2)
			s := &sink{}
			if err := p.Start(s); err != nil {
				b.Fatal(err)
			}
			f := benchFrame(size, true) // size bytes once untagged
			h := n.h
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				h.Receive(f)
			}
			if s.n == 0 || p.Stats.RxFrames.Load() == 0 {
				b.Fatal("nothing received")
			}
		})
	}
}

func BenchmarkTransmit(b *testing.B) {
	for _, caps := range []gnet.Capabilities{gnet.CapScatterGather, 0} {
		kind := "gather"
		if caps == 0 {
			kind = "flat"
		}
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("direct/%s/%d", kind, size), func(b *testing.B) {
				var n gnet.NIC = &syncNIC{caps: caps}
				f := newTx(benchFrame(size, false))
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := n.Transmit(f); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("vlan/%s/%d", kind, size), func(b *testing.B) {
				n := &syncNIC{caps: caps}
				tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2}})
				if err != nil {
					b.Fatal(err)
				}
				p, _ := tr.Port(2)
				if err := p.Start(&sink{}); err != nil {
					b.Fatal(err)
				}
				f := newTx(benchFrame(size, false))
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					if err := p.Transmit(f); err != nil {
						b.Fatal(err)
					}
				}
				if p.Stats.TxFrames.Load() == 0 {
					b.Fatal("nothing sent")
				}
			})
		}
	}
}
