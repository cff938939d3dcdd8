package vlan_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/gowrt/gowrt/internal/testutil"
	"sync"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/bridge"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/net/vlan"
)

// TestConcurrentTransmit: two children transmit at once through one
// parent (run with -race); every frame arrives once, tagged with its
// child's VID, and every TxBuf is released once.
func TestConcurrentTransmit(t *testing.T) {
	const perChild = 400
	for _, caps := range []gnet.Capabilities{gnet.CapScatterGather, 0} {
		r := newRig(t, nictest.Config{Caps: caps, TxRing: 8}, vlan.Config{VIDs: []uint16{1, 2}})
		var wg sync.WaitGroup
		frames := map[uint16][]*txFrame{}
		for _, vid := range []uint16{1, 2} {
			for i := 0; i < perChild; i++ {
				f := testutil.Unhex(t, udpUntagged)
				binary.BigEndian.PutUint16(f[len(f)-2:], uint16(i))
				frames[vid] = append(frames[vid], newTx(f, 7, 20))
			}
		}
		for _, vid := range []uint16{1, 2} {
			wg.Add(1)
			go func(p *vlan.Port, rec *recorder, fs []*txFrame) {
				defer wg.Done()
				for _, f := range fs {
					for {
						err := p.Transmit(f)
						if err == nil {
							break
						}
						if !errors.Is(err, gnet.ErrTxFull) {
							t.Error(err)
							return
						}
						select { // woken once the ring drains
						case <-rec.ready:
						case <-time.After(5 * time.Second):
							t.Error("TxReady lost")
							return
						}
					}
				}
			}(r.ports[vid], r.rec[vid], frames[vid])
		}
		seen := map[uint16]int{}
		for i := 0; i < 2*perChild; i++ {
			got := r.wire.next(t)
			if binary.BigEndian.Uint16(got[12:]) != 0x8100 {
				t.Fatalf("untagged frame on the trunk: % x", got)
			}
			vid := binary.BigEndian.Uint16(got[14:]) & 0xfff
			want := testutil.Unhex(t, udpTagged)
			want[15] = byte(vid)
			binary.BigEndian.PutUint16(want[len(want)-2:], uint16(seen[vid]))
			if !bytes.Equal(got, want) {
				t.Fatalf("VID %d frame %d: got\n% x\nwant\n% x", vid, seen[vid], got, want)
			}
			seen[vid]++
		}
		wg.Wait()
		if r.ports[1].Stats.TxFull.Load()+r.ports[2].Stats.TxFull.Load() == 0 {
			t.Error("the ring never filled: the wakeup path was not exercised")
		}
		for vid, fs := range frames {
			for _, f := range fs {
				waitReleased(t, f, 1)
			}
			if n := r.ports[vid].Stats.TxFrames.Load(); n != perChild {
				t.Fatalf("VID %d: TxFrames %d", vid, n)
			}
		}
	}
}

// TestNoAllocs: receiving and transmitting a frame allocates nothing.
func TestNoAllocs(t *testing.T) {
	for _, caps := range []gnet.Capabilities{gnet.CapScatterGather, 0} {
		n := &syncNIC{caps: caps}
		tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2}, Untagged: 1})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := tr.Port(2)
		s := &sink{}
		if err := p.Start(s); err != nil {
			t.Fatal(err)
		}
		in := testutil.Unhex(t, arpTagged)
		if a := testing.AllocsPerRun(1000, func() { n.h.Receive(in) }); a != 0 {
			t.Fatalf("%v allocations per received frame", a)
		}
		f := newTx(testutil.Unhex(t, udpUntagged), 20)
		a := testing.AllocsPerRun(1000, func() {
			if err := p.Transmit(f); err != nil {
				t.Fatal(err)
			}
		})
		if a != 0 && !raceEnabled {
			t.Fatalf("caps %v: %v allocations per transmitted frame", caps, a)
		}
		if s.n == 0 || n.sent == 0 {
			t.Fatal("nothing went through")
		}
	}
}

// TestBridgePort: a child is a bridge port like any NIC. A tagged frame
// from the switch reaches a plain LAN port untagged; the answer from the
// LAN port goes back to the switch tagged with the child's VID.
func TestBridgePort(t *testing.T) {
	for _, caps := range []gnet.Capabilities{gnet.CapScatterGather, 0} {
		r := newRigUnstarted(t, nictest.Config{Caps: caps}, vlan.Config{VIDs: []uint16{1, 2}, Name: "eth0"})
		br, err := bridge.New(bridge.Config{MAC: gnet.MAC{0x02, 0xbb, 0, 0, 0, 1}, FloodRate: -1})
		if err != nil {
			t.Fatal(err)
		}
		p1, _ := r.trunk.Port(1)
		if _, err := br.AttachNIC(p1, bridge.DefaultVLANs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p1.Stop)
		lan, host := nictest.Pair(nictest.Config{MAC: gnet.MAC{0x02, 0xcc, 0, 0, 0, 1}},
			nictest.Config{MAC: gnet.MAC{0x02, 0, 0, 0, 0, 0x0a}})
		if _, err := br.AttachNIC(lan, bridge.DefaultVLANs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(lan.Stop)
		hostRec := newRecorder()
		if err := host.Start(hostRec); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(host.Stop)

		// Switch → trunk (VLAN 1) → bridge → LAN host, untagged.
		arp := testutil.Unhex(t, arpTagged)
		arp[14], arp[15] = 0x00, 0x01
		r.fromSwitch(t, arp)
		if got, want := hostRec.next(t), testutil.Unhex(t, arpUntagged); !bytes.Equal(got, want) {
			t.Fatalf("LAN host got\n% x\nwant\n% x", got, want)
		}
		// LAN host → bridge (learned 02:..:02 behind the trunk) → switch, tagged.
		reply := testutil.Unhex(t, `
			020000000002 02000000000a 0806
			0001 0800 06 04 0002 02000000000a c0a80201 020000000002 c0a80264
			000000000000000000000000000000000000`)
		if err := host.Transmit(newTx(reply)); err != nil {
			t.Fatal(err)
		}
		want := testutil.Unhex(t, `
			020000000002 02000000000a 8100 0001 0806
			0001 0800 06 04 0002 02000000000a c0a80201 020000000002 c0a80264
			000000000000000000000000000000000000`)
		if got := r.wire.next(t); !bytes.Equal(got, want) {
			t.Fatalf("switch got\n% x\nwant\n% x", got, want)
		}
		if br.Forwarded() != 1 {
			t.Fatalf("bridge forwarded %d frames, want 1 (the reply, to a learned port)", br.Forwarded())
		}
	}
}

// newRigUnstarted is newRig without starting the children.
func newRigUnstarted(t *testing.T, pc nictest.Config, cfg vlan.Config) *rig {
	t.Helper()
	pc.MAC = parentMAC
	r := &rig{ports: map[uint16]*vlan.Port{}, rec: map[uint16]*recorder{}, wire: newRecorder()}
	r.parent, r.peer = nictest.Pair(pc, nictest.Config{MAC: peerMAC, Caps: gnet.CapScatterGather})
	if err := r.peer.Start(r.wire); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.peer.Stop)
	tr, err := vlan.New(r.parent, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.trunk = tr
	return r
}

// batchNIC is a syncNIC that batches its doorbells (net.TxBatcher).
type batchNIC struct {
	syncNIC
	nictest.BatchCounter
}

// TestPortRelaysTxBatch: a child's transmit batch is its parent's, when
// the parent batches (net.TxBatcher); over a parent that does not, a
// batch is nothing.
func TestPortRelaysTxBatch(t *testing.T) {
	n := &batchNIC{}
	tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := tr.Port(2)
	nictest.CheckBatchRelay(t, p, &n.BatchCounter)
	plain, err := vlan.New(&syncNIC{}, vlan.Config{VIDs: []uint16{1}})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := plain.Port(1)
	q.TxBatchBegin()
	q.TxBatchEnd()
}
