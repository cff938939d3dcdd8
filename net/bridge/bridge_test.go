package bridge

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
)

var (
	brMAC = gnet.MAC{0x02, 0xbb, 0, 0, 0, 1}
	stA   = gnet.MAC{0x02, 0, 0, 0, 0, 0xa}
	stB   = gnet.MAC{0x02, 0, 0, 0, 0, 0xb}
	stC   = gnet.MAC{0x02, 0, 0, 0, 0, 0xc}
	bcast = gnet.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	mcast = gnet.MAC{0x01, 0x00, 0x5e, 0, 0, 0xfb}
)

// capLink records what the bridge sends on a port.
type capLink struct {
	frames [][]byte
	refuse bool
}

func (l *capLink) Send(hdr, payload []byte) bool {
	if l.refuse {
		return false
	}
	f := make([]byte, 0, len(hdr)+len(payload))
	l.frames = append(l.frames, append(append(f, hdr...), payload...))
	return true
}

func (l *capLink) take() [][]byte {
	f := l.frames
	l.frames = nil
	return f
}

type clock struct{ t int64 }

func (c *clock) now() int64              { return c.t }
func (c *clock) advance(d time.Duration) { c.t += int64(d) }

// frame builds an Ethernet frame; vid < 0 means untagged, otherwise an
// 802.1Q tag with the given PCP and VID (VID 0 = priority tag).
func frame(dst, src gnet.MAC, vid int, pcp uint16, payload int) []byte {
	f := append(append([]byte{}, dst[:]...), src[:]...)
	if vid >= 0 {
		f = binary.BigEndian.AppendUint16(f, tpid8021Q)
		f = binary.BigEndian.AppendUint16(f, pcp<<13|uint16(vid))
	}
	f = binary.BigEndian.AppendUint16(f, 0x0800)
	for i := 0; i < payload; i++ {
		f = append(f, byte(i))
	}
	return f
}

type rig struct {
	b     *Bridge
	clk   *clock
	links []*capLink
}

func newRig(t testing.TB, vlans ...PortVLANs) *rig {
	t.Helper()
	clk := &clock{t: int64(time.Hour)}
	b, err := New(Config{MAC: brMAC, AgeTime: 300 * time.Second, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{b: b, clk: clk}
	for _, v := range vlans {
		l := &capLink{}
		p, err := b.AddPort(l, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.SetLink(p, true); err != nil {
			t.Fatal(err)
		}
		r.links = append(r.links, l)
	}
	return r
}

// sent returns, per port, how many frames each port got since last call.
func (r *rig) sent() []int {
	n := make([]int, len(r.links))
	for i, l := range r.links {
		n[i] = len(l.take())
	}
	return n
}

func eq(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (r *rig) expect(t *testing.T, what string, want ...int) {
	t.Helper()
	if got := r.sent(); !eq(got, want) {
		t.Fatalf("%s: frames per port %v, want %v", what, got, want)
	}
}

func TestLearning(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs, DefaultVLANs)
	r.b.Input(0, frame(stB, stA, -1, 0, 46))
	r.expect(t, "unknown unicast floods, not back to ingress", 0, 1, 1)
	if p, ok := r.b.Lookup(1, stA); !ok || p != 0 {
		t.Fatalf("A learned on %d %v, want port 0", p, ok)
	}
	r.b.Input(1, frame(stA, stB, -1, 0, 46))
	r.expect(t, "known unicast goes to one port", 1, 0, 0)
	r.b.Input(0, frame(stB, stA, -1, 0, 46))
	r.expect(t, "B now known", 0, 1, 0)
	if r.b.Forwarded() != 2 || r.b.Flooded() != 1 {
		t.Fatalf("forwarded %d flooded %d", r.b.Forwarded(), r.b.Flooded())
	}
	// Station move: A appears on port 2.
	r.b.Input(2, frame(stC, stA, -1, 0, 46))
	r.sent()
	r.b.Input(1, frame(stA, stB, -1, 0, 46))
	r.expect(t, "A moved to port 2", 0, 0, 1)
	if got := r.b.PortStats(0).RxFrames.Load(); got != 2 {
		t.Fatalf("port 0 RxFrames %d, want 2", got)
	}
}

func TestAging(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs, DefaultVLANs)
	r.b.Input(0, frame(bcast, stA, -1, 0, 46))
	r.sent()
	r.clk.advance(299 * time.Second)
	r.b.Input(1, frame(stA, stB, -1, 0, 46))
	r.expect(t, "A still fresh at 299 s", 1, 0, 0)
	r.clk.advance(2 * time.Second) // A last seen 301 s ago; B 2 s ago
	r.b.Input(1, frame(stA, stB, -1, 0, 46))
	r.expect(t, "A aged out: flood", 1, 0, 1)
	if _, ok := r.b.Lookup(1, stA); ok {
		t.Fatal("aged entry still found")
	}
	if n := r.b.FDBEntries(); n != 1 {
		t.Fatalf("%d live entries, want 1 (B)", n)
	}
	// Refreshing keeps an entry alive indefinitely.
	for i := 0; i < 5; i++ {
		r.clk.advance(200 * time.Second)
		r.b.Input(1, frame(bcast, stB, -1, 0, 46))
	}
	r.sent()
	r.b.Input(0, frame(stB, stA, -1, 0, 46))
	r.expect(t, "refreshed B", 0, 1, 0)
}

func TestSweepReclaimsSlots(t *testing.T) {
	clk := &clock{t: int64(time.Hour)}
	b, err := New(Config{MAC: brMAC, AgeTime: 10 * time.Second, FDBSize: 64, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	l := &capLink{}
	p, _ := b.AddPort(l, DefaultVLANs)
	q, _ := b.AddPort(&capLink{}, DefaultVLANs)
	b.SetLink(p, true)
	b.SetLink(q, true)
	// Many generations of distinct stations: without sweeping, tombstones
	// would fill the 64-slot table and learning would fail.
	for gen := 0; gen < 20; gen++ {
		for i := 0; i < 40; i++ {
			src := gnet.MAC{0x02, 0, 0, byte(gen), 0, byte(i)}
			b.Input(p, frame(bcast, src, -1, 0, 46))
		}
		clk.advance(11 * time.Second)
	}
	src := gnet.MAC{0x02, 0, 0, 0xee, 0, 1}
	b.Input(p, frame(bcast, src, -1, 0, 46))
	if _, ok := b.Lookup(1, src); !ok {
		t.Fatalf("new station not learned after many aged generations (FDB full %d)", b.fdb.full)
	}
}

func TestFDBFullFloods(t *testing.T) {
	clk := &clock{t: int64(time.Hour)}
	b, _ := New(Config{MAC: brMAC, FDBSize: 16, Now: clk.now})
	l0, l1 := &capLink{}, &capLink{}
	b.AddPort(l0, DefaultVLANs)
	b.AddPort(l1, DefaultVLANs)
	b.SetLink(0, true)
	b.SetLink(1, true)
	for i := 0; i < 64; i++ {
		b.Input(0, frame(bcast, gnet.MAC{0x02, 1, 0, 0, 0, byte(i)}, -1, 0, 46))
	}
	if b.fdb.full == 0 {
		t.Fatal("a 16-slot table took 64 stations")
	}
	if n := b.FDBEntries(); n > 16 {
		t.Fatalf("%d entries in a 16-slot table", n)
	}
}

func TestFlooding(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs, DefaultVLANs, DefaultVLANs)
	r.b.Input(2, frame(bcast, stA, -1, 0, 46))
	r.expect(t, "broadcast", 1, 1, 0, 1)
	r.b.Input(2, frame(mcast, stA, -1, 0, 46))
	r.expect(t, "multicast", 1, 1, 0, 1)
	r.b.SetLink(3, false)
	r.b.Input(2, frame(bcast, stA, -1, 0, 46))
	r.expect(t, "down port excluded", 1, 1, 0, 0)
	r.b.Input(3, frame(bcast, stB, -1, 0, 46))
	r.expect(t, "down port ingress", 0, 0, 0, 0)
	if r.b.Stats.Dropped(ReasonPortDown) != 1 {
		t.Fatal("ingress on a down port not counted")
	}
}

func TestPortDownFlushes(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs, DefaultVLANs)
	r.b.Input(1, frame(bcast, stB, -1, 0, 46))
	r.b.SetLink(1, false)
	r.b.SetLink(1, true)
	r.sent()
	if _, ok := r.b.Lookup(1, stB); ok {
		t.Fatal("station survived its port going down")
	}
	r.b.Input(0, frame(stB, stA, -1, 0, 46))
	r.expect(t, "flushed station floods", 0, 1, 1)
}

func TestVLANIsolation(t *testing.T) {
	access10 := PortVLANs{PVID: 10, Untagged: []uint16{10}}
	access20 := PortVLANs{PVID: 20, Untagged: []uint16{20}}
	trunk := PortVLANs{Tagged: []uint16{10, 20}}
	r := newRig(t, access10, access20, trunk, access10)

	in := frame(bcast, stA, -1, 0, 46)
	r.b.Input(0, in)
	got := r.links[2].take()
	if len(got) != 1 || !bytes.Equal(got[0], frame(bcast, stA, 10, 0, 46)) {
		t.Fatalf("trunk got %x, want VLAN 10 tagged copy", got)
	}
	if f := r.links[3].take(); len(f) != 1 || !bytes.Equal(f[0], in) {
		t.Fatalf("same-VLAN access port got %x, want the untagged frame", f)
	}
	r.expect(t, "VLAN 20 port sees nothing of VLAN 10", 0, 0, 0, 0)

	// Tagged VLAN 20 from the trunk: untagged on port 1 only, PCP dropped
	// with the tag.
	r.b.Input(2, frame(bcast, stB, 20, 5, 46))
	if f := r.links[1].take(); len(f) != 1 || !bytes.Equal(f[0], frame(bcast, stB, -1, 0, 46)) {
		t.Fatalf("access port 20 got %x, want untagged", f)
	}
	r.expect(t, "VLAN 20 stays in VLAN 20", 0, 0, 0, 0)

	// A VLAN the trunk does not carry, and a tag on an access port.
	r.b.Input(2, frame(bcast, stB, 30, 0, 46))
	r.b.Input(0, frame(bcast, stA, 20, 0, 46))
	r.expect(t, "non-member VLANs", 0, 0, 0, 0)
	if n := r.b.Stats.Dropped(ReasonVLANFiltered); n != 2 {
		t.Fatalf("VLANFiltered %d, want 2", n)
	}
	// Untagged frame on the trunk (no PVID) is dropped.
	r.b.Input(2, frame(bcast, stB, -1, 0, 46))
	if n := r.b.Stats.Dropped(ReasonVLANFiltered); n != 3 {
		t.Fatalf("untagged on a PVID-less trunk not dropped")
	}
	// Priority-tagged frame on an access port: classified by PVID, PCP
	// carried into the trunk's tag.
	r.b.Input(0, frame(bcast, stA, 0, 3, 46))
	if f := r.links[2].take(); len(f) != 1 || !bytes.Equal(f[0], frame(bcast, stA, 10, 3, 46)) {
		t.Fatalf("trunk got %x, want VLAN 10 PCP 3", f)
	}
	r.sent()
	// Learning is per VLAN: A is known in VLAN 10, unknown in VLAN 20.
	r.b.Input(2, frame(stA, stB, 20, 0, 46))
	r.expect(t, "A unknown in VLAN 20 floods there", 0, 1, 0, 0)
	r.b.Input(2, frame(stA, stB, 10, 0, 46))
	r.expect(t, "A known in VLAN 10", 1, 0, 0, 0)
}

func TestVLANConfigErrors(t *testing.T) {
	r := newRig(t, DefaultVLANs)
	for _, v := range []PortVLANs{
		{PVID: 5, Untagged: []uint16{1}},             // PVID not a member
		{Tagged: []uint16{4095}},                     // reserved
		{Untagged: []uint16{0}},                      // VID 0
		{PVID: 5000},                                 // out of range
		{Tagged: []uint16{7}, Untagged: []uint16{7}}, // both
	} {
		if err := r.b.SetVLANs(0, v); err == nil {
			t.Errorf("SetVLANs(%+v) accepted", v)
		}
	}
	if err := r.b.SetVLANs(3, DefaultVLANs); err == nil {
		t.Error("SetVLANs on a missing port accepted")
	}
	if err := r.b.SetLink(-1, true); err == nil {
		t.Error("SetLink(-1) accepted")
	}
}

func TestHairpinPrevention(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs, DefaultVLANs)
	r.b.Input(1, frame(bcast, stB, -1, 0, 46))
	r.b.Input(1, frame(bcast, stC, -1, 0, 46))
	r.sent()
	// C talks to B, but both sit behind port 1 (a hub or switch there).
	r.b.Input(1, frame(stB, stC, -1, 0, 46))
	r.expect(t, "destination on ingress port", 0, 0, 0)
	if r.b.Stats.Dropped(ReasonHairpin) != 1 {
		t.Fatal("hairpin not counted")
	}
}

func TestOwnSourceDropped(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs)
	r.b.Input(0, frame(bcast, brMAC, -1, 0, 46))
	r.expect(t, "own MAC as source", 0, 0)
	if r.b.Stats.Dropped(ReasonOwnSource) != 1 {
		t.Fatal("own-source frame not counted")
	}
	if _, ok := r.b.Lookup(1, brMAC); ok {
		t.Fatal("own MAC learned on a port")
	}
}

func TestLinkLocalNotForwarded(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs)
	bpdu := gnet.MAC{0x01, 0x80, 0xc2, 0, 0, 0}
	f := frame(bpdu, stA, -1, 0, 46)
	binary.BigEndian.PutUint16(f[12:], 39) // 802.3 length: LLC
	r.b.Input(0, f)
	r.expect(t, "BPDU", 0, 0)
	if r.b.Stats.Dropped(ReasonLinkLocal) != 1 {
		t.Fatal("link-local frame not counted")
	}
}

func TestMalformedDropped(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs)
	good := frame(bcast, stA, -1, 0, 1500)
	tagged := frame(bcast, stA, 1, 0, 1500)
	badTag := frame(bcast, stA, 0xfff, 0, 46)
	badType := frame(bcast, stA, -1, 0, 46)
	binary.BigEndian.PutUint16(badType[12:], 1536-1)
	for _, c := range []struct {
		f []byte
		r Reason
	}{
		{nil, ReasonZeroLength},
		{[]byte{}, ReasonZeroLength},
		{good[:13], ReasonTruncated},
		{tagged[:17], ReasonTruncated},
		{append(good, 0), ReasonOversize},
		{append(tagged, 0), ReasonOversize},
		{badTag, ReasonBadVLAN},
		{badType, ReasonBadLengthType},
		{frame(bcast, bcast, -1, 0, 46), ReasonBadSource},
		{frame(bcast, gnet.MAC{}, -1, 0, 46), ReasonBadSource},
	} {
		before := r.b.Stats.Dropped(c.r)
		r.b.Input(0, c.f)
		if r.b.Stats.Dropped(c.r) != before+1 {
			t.Errorf("%v frame (%d bytes) not counted", c.r, len(c.f))
		}
	}
	r.b.Input(7, good)
	if r.b.Stats.Dropped(ReasonNoPort) != 1 {
		t.Error("unknown port not counted")
	}
	r.expect(t, "malformed", 0, 0)
	// Maximal good frames pass, tagged ones keep their 4 extra bytes.
	r.b.Input(0, good)
	r.b.Input(0, tagged)
	r.expect(t, "max-size frames", 0, 2)
}

func TestTxDropCounted(t *testing.T) {
	r := newRig(t, DefaultVLANs, DefaultVLANs)
	r.links[1].refuse = true
	r.b.Input(0, frame(bcast, stA, -1, 0, 46))
	if r.b.PortStats(1).TxDropped.Load() != 1 || r.b.PortStats(1).TxFrames.Load() != 0 {
		t.Fatal("refused send not counted as TX drop")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{MAC: gnet.MAC{}},
		{MAC: bcast},
		{MAC: brMAC, MTU: 10},
		{MAC: brMAC, MTU: 9000},
		{MAC: brMAC, FDBSize: 3},
		{MAC: brMAC, AgeTime: -1},
		{MAC: brMAC, FloodRate: 1 << 30},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

func gnetMAC(b ...byte) gnet.MAC { var m gnet.MAC; copy(m[:], b); return m }

// TestFDBHashSpreadsAllKeyBits: stations differing only in the first
// octet, or only in the VLAN, must not pile onto one probe chain.
func TestFDBHashSpreadsAllKeyBits(t *testing.T) {
	clk := &clock{t: int64(time.Hour)}
	b, _ := New(Config{MAC: brMAC, FDBSize: 64, Now: clk.now})
	trunk := PortVLANs{Tagged: []uint16{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	b.AddPort(&capLink{}, trunk)
	b.AddPort(&capLink{}, trunk)
	b.SetLink(0, true)
	b.SetLink(1, true)
	for i := 0; i < 12; i++ {
		b.Input(0, frame(bcast, gnet.MAC{byte(2 + 2*i), 0, 0, 0, 0, 1}, 1, 0, 46))
		b.Input(0, frame(bcast, stA, i+1, 0, 46))
	}
	if n := b.FDBEntries(); n != 24 {
		t.Fatalf("%d of 24 stations learned (FDB full %d)", n, b.fdb.full)
	}
}

// TestStormControl: a port may flood FloodRate frames per second in
// bursts of a tenth of a second's worth; the excess is dropped and
// counted, known unicast is never limited, and the host port is exempt.
func TestStormControl(t *testing.T) {
	clk := &clock{t: int64(time.Hour)}
	b, _ := New(Config{MAC: brMAC, FloodRate: 100, Now: clk.now})
	l0, l1 := &capLink{}, &capLink{}
	b.AddPort(l0, DefaultVLANs)
	b.AddPort(l1, DefaultVLANs)
	b.SetLink(0, true)
	b.SetLink(1, true)
	host, err := b.AddHostPort(DefaultVLANs)
	if err != nil {
		t.Fatal(err)
	}
	hl := &countHandler{}
	host.Start(hl)
	b.Input(1, frame(bcast, stB, -1, 0, 46)) // learn B on port 1
	for i := 0; i < 50; i++ {
		b.Input(0, frame(bcast, stA, -1, 0, 46))
	}
	if n := len(l1.take()); n != 10 {
		t.Fatalf("port 1 got %d frames, want the 10-frame burst", n)
	}
	if d := b.Stats.Dropped(ReasonStorm); d != 40 {
		t.Fatalf("%d storm drops, want 40", d)
	}
	for i := 0; i < 50; i++ { // known unicast: not limited
		b.Input(0, frame(stB, stA, -1, 0, 46))
	}
	if n := len(l1.take()); n != 50 {
		t.Fatalf("%d of 50 unicast frames forwarded during the storm", n)
	}
	clk.advance(50 * time.Millisecond) // refills 5 frames
	for i := 0; i < 10; i++ {
		b.Input(0, frame(bcast, stA, -1, 0, 46))
	}
	if n := len(l1.take()); n != 5 {
		t.Fatalf("%d frames after 50 ms, want 5", n)
	}
	l0.take()
	for i := 0; i < 50; i++ { // the host port floods what it likes
		host.Transmit(txBytes(frame(bcast, brMAC, -1, 0, 46)))
	}
	if n := len(l0.take()); n != 50 {
		t.Fatalf("host port flooded %d of 50 frames", n)
	}
	if d := b.Stats.Dropped(ReasonStorm); d != 45 {
		t.Fatalf("%d storm drops, want 45", d)
	}
}

// countHandler counts what a host NIC delivers.
type countHandler struct{ n int }

func (h *countHandler) Receive([]byte)             { h.n++ }
func (h *countHandler) LinkChanged(gnet.LinkState) {}

// txBytes is a one-segment TxBuf.
type txBytes []byte

func (f txBytes) Segments() [][]byte { return [][]byte{f} }
func (f txBytes) Len() int           { return len(f) }
func (f txBytes) Release()           {}
