package vlan_test

import (
	"bytes"
	"errors"
	"github.com/gowrt/gowrt/internal/testutil"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/nictest"
	"github.com/gowrt/gowrt/net/vlan"
)

// The frames below are written out byte by byte, as a capture shows them,
// independently of the code under test.

// arpTagged is an ARP request (RFC 826) from 02:00:00:00:00:02 for
// 192.168.2.1, in VLAN 2 with PCP 5 (TCI 0xa002, IEEE 802.1Q-2018 9.6),
// padded to 64 bytes.
const arpTagged = `
ffffffffffff 020000000002 8100 a002 0806
0001 0800 06 04 0001 020000000002 c0a80264 000000000000 c0a80201
000000000000000000000000000000000000`

// arpUntagged is arpTagged as the VLAN 2 child must see it.
const arpUntagged = `
ffffffffffff 020000000002 0806
0001 0800 06 04 0001 020000000002 c0a80264 000000000000 c0a80201
000000000000000000000000000000000000`

// udpUntagged is an IPv4/UDP datagram (RFC 791, RFC 768) from
// 192.168.1.1:53 to 192.168.1.100:5353 carrying "gowrt", as a child sends it.
const udpUntagged = `
020000000002 020000000001 0800
4500 0021 0000 4000 4011 0000 c0a80101 c0a80164
0035 14e9 000d 0000 676f777274`

// udpTagged is udpUntagged on the wire of the trunk, in VLAN 1, PCP 0.
const udpTagged = `
020000000002 020000000001 8100 0001 0800
4500 0021 0000 4000 4011 0000 c0a80101 c0a80164
0035 14e9 000d 0000 676f777274`

// rig is a trunk over one end of a nictest pair; the other end (peer)
// plays the switch.
type rig struct {
	parent, peer *nictest.NIC
	wire         *recorder // what the peer receives
	trunk        *vlan.Trunk
	ports        map[uint16]*vlan.Port
	rec          map[uint16]*recorder
}

func newRig(t *testing.T, pc nictest.Config, cfg vlan.Config) *rig {
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
	for _, vid := range cfg.VIDs {
		p, err := tr.Port(vid)
		if err != nil {
			t.Fatal(err)
		}
		r.ports[vid], r.rec[vid] = p, newRecorder()
		if err := p.Start(r.rec[vid]); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Stop)
	}
	return r
}

// fromSwitch sends f from the peer to the trunk and waits until it was
// handled.
func (r *rig) fromSwitch(t *testing.T, f []byte) {
	t.Helper()
	if err := r.peer.Transmit(newTx(f)); err != nil {
		t.Fatal(err)
	}
}

func TestReceiveUntagsByteExact(t *testing.T) {
	r := newRig(t, nictest.Config{}, vlan.Config{VIDs: []uint16{1, 2}, Untagged: 1, Name: "eth0"})
	r.fromSwitch(t, testutil.Unhex(t, arpTagged))
	if got, want := r.rec[2].next(t), testutil.Unhex(t, arpUntagged); !bytes.Equal(got, want) {
		t.Fatalf("VLAN 2 got\n% x\nwant\n% x", got, want)
	}
	// Untagged: to the Untagged VLAN as it is.
	r.fromSwitch(t, testutil.Unhex(t, arpUntagged))
	if got, want := r.rec[1].next(t), testutil.Unhex(t, arpUntagged); !bytes.Equal(got, want) {
		t.Fatalf("untagged frame got\n% x\nwant\n% x", got, want)
	}
	// Priority-tagged (VID 0, PCP 3): to the Untagged VLAN, tag stripped.
	prio := testutil.Unhex(t, arpTagged)
	prio[14], prio[15] = 0x60, 0x00
	r.fromSwitch(t, prio)
	if got, want := r.rec[1].next(t), testutil.Unhex(t, arpUntagged); !bytes.Equal(got, want) {
		t.Fatalf("priority-tagged frame got\n% x\nwant\n% x", got, want)
	}
	r.rec[1].none(t)
	r.rec[2].none(t)
	p2 := r.ports[2]
	if p2.Stats.RxFrames.Load() != 1 || p2.Stats.RxBytes.Load() != uint64(len(testutil.Unhex(t, arpUntagged))) {
		t.Fatalf("VLAN 2 counted %d frames, %d bytes", p2.Stats.RxFrames.Load(), p2.Stats.RxBytes.Load())
	}
	if c := p2.Counters(); c.RxFrames != 1 {
		t.Fatalf("Counters: %+v", c)
	}
	if p2.Name() != "eth0.2" || p2.VID() != 2 {
		t.Fatalf("name %q, VID %d", p2.Name(), p2.VID())
	}
}

// TestReceiveHandlerBorrowsScratch: a tagged frame is rebuilt once, into
// memory that is neither the parent's receive buffer (which must not be
// written) nor a fresh allocation per frame.
func TestReceiveHandlerBorrowsScratch(t *testing.T) {
	n := &syncNIC{}
	tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{2}})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := tr.Port(2)
	var seen [2]*byte
	var i int
	h := handlerFunc(func(f []byte) { seen[i] = &f[0]; i++ })
	if err := p.Start(h); err != nil {
		t.Fatal(err)
	}
	in := testutil.Unhex(t, arpTagged)
	orig := bytes.Clone(in)
	n.h.Receive(in)
	n.h.Receive(in)
	if !bytes.Equal(in, orig) {
		t.Fatal("the borrowed frame was written")
	}
	if i != 2 || seen[0] != seen[1] || seen[0] == &in[0] {
		t.Fatalf("frames lent from %p, %p; parent buffer %p", seen[0], seen[1], &in[0])
	}
}

type handlerFunc func([]byte)

func (f handlerFunc) Receive(b []byte)         { f(b) }
func (handlerFunc) LinkChanged(gnet.LinkState) {}

func TestTransmitTagsByteExact(t *testing.T) {
	for _, caps := range []gnet.Capabilities{gnet.CapScatterGather, 0} {
		// Cuts: one segment; the header split inside the addresses and
		// after the type; the addresses exactly; many tiny segments.
		for _, cuts := range [][]int{nil, {5, 14}, {12}, {1, 2, 3, 11, 12, 13, 20, 40}} {
			r := newRig(t, nictest.Config{Caps: caps}, vlan.Config{VIDs: []uint16{1, 2}})
			f := newTx(testutil.Unhex(t, udpUntagged), cuts...)
			if err := r.ports[1].Transmit(f); err != nil {
				t.Fatal(err)
			}
			if got, want := r.wire.next(t), testutil.Unhex(t, udpTagged); !bytes.Equal(got, want) {
				t.Fatalf("caps %v cuts %v: wire got\n% x\nwant\n% x", caps, cuts, got, want)
			}
			waitReleased(t, f, 1)
			if n := r.parent.TxBadSegs.Load(); n != 0 {
				t.Fatalf("gather list sent to a NIC without scatter-gather")
			}
			p := r.ports[1]
			if p.Stats.TxFrames.Load() != 1 || p.Stats.TxBytes.Load() != uint64(len(f.b)) {
				t.Fatalf("counted %d frames, %d bytes", p.Stats.TxFrames.Load(), p.Stats.TxBytes.Load())
			}
		}
	}
}

// TestRoundTrip: a child's frame tagged by one trunk and untagged by
// another, facing it, comes out byte for byte (1514 bytes: the tagged
// frame is the 1518 bytes every NIC takes).
func TestRoundTrip(t *testing.T) {
	a, b := nictest.Pair(nictest.Config{MAC: parentMAC, Caps: gnet.CapScatterGather}, nictest.Config{MAC: peerMAC})
	ta, err := vlan.New(a, vlan.Config{VIDs: []uint16{7, 4094}})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := vlan.New(b, vlan.Config{VIDs: []uint16{7, 4094}})
	if err != nil {
		t.Fatal(err)
	}
	recs := map[uint16]*recorder{}
	for _, tr := range []*vlan.Trunk{ta, tb} {
		for _, p := range tr.Ports() {
			r := newRecorder()
			if tr == tb {
				recs[p.VID()] = r
			}
			if err := p.Start(r); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Stop)
		}
	}
	for _, vid := range []uint16{7, 4094} {
		f := make([]byte, gnet.EthHeaderLen+gnet.DefaultMTU)
		for i := range f {
			f[i] = byte(i * int(vid))
		}
		f[12], f[13] = 0x08, 0x00
		pa, _ := ta.Port(vid)
		tx := newTx(f, 100, 700)
		if err := pa.Transmit(tx); err != nil {
			t.Fatal(err)
		}
		if got := recs[vid].next(t); !bytes.Equal(got, f) {
			t.Fatalf("VID %d: round trip changed the frame", vid)
		}
		waitReleased(t, tx, 1)
	}
}

func waitReleased(t *testing.T, f *txFrame, want int32) {
	t.Helper()
	for i := 0; i < 500 && f.released.Load() < want; i++ {
		sleepMs(10)
	}
	if n := f.released.Load(); n != want {
		t.Fatalf("released %d times, want %d", n, want)
	}
}

func TestReceiveDrops(t *testing.T) {
	n := &syncNIC{}
	tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := tr.Port(1)
	p2, _ := tr.Port(2)
	rec := newRecorder()
	if err := p1.Start(rec); err != nil { // p2 stays stopped
		t.Fatal(err)
	}
	tagged := func(tci uint16, n int) []byte {
		f := testutil.Unhex(t, arpTagged)
		f[14], f[15] = byte(tci>>8), byte(tci)
		return f[:n]
	}
	cases := []struct {
		name  string
		frame []byte
		count func() uint64
	}{
		{"empty", nil, tr.Stats.RxRunt.Load},
		{"13 bytes", tagged(1, 13), tr.Stats.RxRunt.Load},
		{"tag cut short", tagged(1, 17), tr.Stats.RxRunt.Load},
		{"reserved VID", tagged(0x0fff, 64), tr.Stats.RxBadVID.Load},
		{"unknown VID", tagged(3, 64), tr.Stats.RxUnknownVID.Load},
		{"untagged", testutil.Unhex(t, arpUntagged), tr.Stats.RxUntagged.Load},
		{"priority-tagged", tagged(0xe000, 64), tr.Stats.RxUntagged.Load},
		{"stopped child", tagged(2, 64), p2.Stats.RxStopped.Load},
		{"oversize", make([]byte, gnet.RxBufSize+1), tr.Stats.RxOversize.Load},
	}
	for _, c := range cases {
		before := c.count()
		n.h.Receive(c.frame)
		if c.count() != before+1 {
			t.Errorf("%s: not counted", c.name)
		}
	}
	rec.none(t)
	if p1.Stats.RxFrames.Load() != 0 {
		t.Fatal("a dropped frame was counted as received")
	}
	// The smallest tagged frame that is whole: 18 bytes, delivered as 14.
	n.h.Receive(tagged(1, 18))
	if got := rec.next(t); len(got) != gnet.EthHeaderLen {
		t.Fatalf("18-byte tagged frame delivered as %d bytes", len(got))
	}
}

func TestTxFullFanOut(t *testing.T) {
	r := newRig(t, nictest.Config{Caps: gnet.CapScatterGather, TxRing: 2}, vlan.Config{VIDs: []uint16{1, 2, 3}})
	r.parent.HoldTX(true)
	var accepted, refused []*txFrame
	// Fill the ring from VID 1 (the held engine may already have taken
	// one frame off it, so count on no exact number).
	for {
		f := newTx(testutil.Unhex(t, udpUntagged))
		err := r.ports[1].Transmit(f)
		if errors.Is(err, gnet.ErrTxFull) {
			refused = append(refused, f)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if accepted = append(accepted, f); len(accepted) > 4 {
			t.Fatal("a 2-descriptor ring took 5 frames")
		}
	}
	f := newTx(testutil.Unhex(t, udpUntagged))
	if err := r.ports[2].Transmit(f); !errors.Is(err, gnet.ErrTxFull) {
		t.Fatalf("VID 2: %v, want ErrTxFull", err)
	}
	refused = append(refused, f)
	for _, vid := range []uint16{1, 2} {
		if r.ports[vid].Stats.TxFull.Load() != 1 {
			t.Fatalf("VID %d: TxFull not counted", vid)
		}
	}
	r.parent.HoldTX(false)
	recv(t, r.rec[1].ready)
	recv(t, r.rec[2].ready)
	select {
	case <-r.rec[3].ready:
		t.Fatal("VID 3 was never refused but got TxReady")
	case <-r.rec[1].ready:
		t.Fatal("VID 1 woken twice")
	default:
	}
	for _, f := range accepted {
		waitReleased(t, f, 1)
	}
	for _, f := range refused {
		if f.released.Load() != 0 {
			t.Fatal("a refused frame was released: its caller still owns it")
		}
	}
	// After the wakeup the refused frames go through.
	for i, vid := range []uint16{1, 2} {
		if err := r.ports[vid].Transmit(refused[i]); err != nil {
			t.Fatal(err)
		}
		waitReleased(t, refused[i], 1)
	}
}

// TestReleaseOnErrorPaths: a frame the child refuses is never released
// (the caller keeps it); one the parent drops at Stop is released once.
func TestReleaseOnErrorPaths(t *testing.T) {
	for _, caps := range []gnet.Capabilities{gnet.CapScatterGather, 0} {
		r := newRig(t, nictest.Config{Caps: caps, TxRing: 4}, vlan.Config{VIDs: []uint16{1, 2}})
		p := r.ports[1]
		short := newTx(make([]byte, 13))
		if err := p.Transmit(short); !errors.Is(err, vlan.ErrFrameSize) {
			t.Fatalf("13-byte frame: %v", err)
		}
		long := newTx(make([]byte, gnet.RxBufSize-3))
		if err := p.Transmit(long); !errors.Is(err, vlan.ErrFrameSize) {
			t.Fatalf("oversize frame: %v", err)
		}
		r.parent.SetLink(false)
		down := newTx(testutil.Unhex(t, udpUntagged))
		if err := p.Transmit(down); !errors.Is(err, gnet.ErrLinkDown) {
			t.Fatalf("link down: %v", err)
		}
		r.parent.SetLink(true)
		r.parent.HoldTX(true)
		queued := newTx(testutil.Unhex(t, udpUntagged), 3)
		if err := p.Transmit(queued); err != nil {
			t.Fatal(err)
		}
		stopped := newTx(testutil.Unhex(t, udpUntagged))
		r.ports[1].Stop()
		r.ports[2].Stop() // the last: stops the parent, which drops the queue
		if err := p.Transmit(stopped); !errors.Is(err, vlan.ErrNotRunning) {
			t.Fatalf("stopped child: %v", err)
		}
		for _, f := range []*txFrame{short, long, down, stopped} {
			if f.released.Load() != 0 {
				t.Fatalf("caps %v: refused frame released", caps)
			}
		}
		waitReleased(t, queued, 1)
		if n := p.Stats.TxErrors.Load(); n != 4 {
			t.Fatalf("TxErrors %d, want 4", n)
		}
	}
}

func TestLinkChangesReachEveryChild(t *testing.T) {
	r := newRig(t, nictest.Config{}, vlan.Config{VIDs: []uint16{1, 2, 3}})
	r.peer.SetLink(false)
	for vid, rec := range r.rec {
		if ls := rec.nextLink(t); ls.Up {
			t.Fatalf("VID %d: %+v", vid, ls)
		}
		if r.ports[vid].Link().Up {
			t.Fatalf("VID %d reports carrier", vid)
		}
	}
	r.peer.SetLink(true)
	for vid, rec := range r.rec {
		if ls := rec.nextLink(t); !ls.Up || ls.SpeedMbps != 1000 {
			t.Fatalf("VID %d: %+v", vid, ls)
		}
	}
	if r.ports[2].MACAddress() != parentMAC || r.ports[2].MTU() != gnet.DefaultMTU {
		t.Fatal("child does not report the parent's MAC and MTU")
	}
}

func TestStartStop(t *testing.T) {
	n := &syncNIC{caps: gnet.CapRxChecksum | gnet.CapTxChecksum}
	tr, err := vlan.New(n, vlan.Config{VIDs: []uint16{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := tr.Port(1)
	p2, _ := tr.Port(2)
	if c := p1.Capabilities(); c != gnet.CapScatterGather|gnet.CapRxChecksum {
		t.Fatalf("capabilities %b", c)
	}
	if n.h != nil {
		t.Fatal("parent started before any child")
	}
	if err := p1.Start(&sink{}); err != nil {
		t.Fatal(err)
	}
	if n.h == nil {
		t.Fatal("parent not started with the first child")
	}
	if err := p1.Start(&sink{}); err == nil {
		t.Fatal("second Start accepted")
	}
	if err := p2.Start(&sink{}); err != nil {
		t.Fatal(err)
	}
	p1.Stop()
	if n.stopped {
		t.Fatal("parent stopped while a child runs")
	}
	p1.Stop() // twice: harmless
	p2.Stop()
	if !n.stopped {
		t.Fatal("parent not stopped after the last child")
	}
	if err := p1.Start(&sink{}); !errors.Is(err, vlan.ErrStopped) {
		t.Fatalf("Start after the trunk stopped: %v", err)
	}
	if _, err := tr.Port(3); err == nil {
		t.Fatal("Port(3) of a trunk without VLAN 3")
	}
}

func TestNewRejects(t *testing.T) {
	n := &syncNIC{}
	for _, c := range []vlan.Config{
		{},
		{VIDs: []uint16{0}},
		{VIDs: []uint16{4095}},
		{VIDs: []uint16{1, 2, 1}},
		{VIDs: []uint16{1}, Untagged: 2},
	} {
		if _, err := vlan.New(n, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := vlan.New(nil, vlan.Config{VIDs: []uint16{1}}); err == nil {
		t.Error("nil parent accepted")
	}
}
