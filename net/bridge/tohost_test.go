package bridge

import (
	"bytes"
	"fmt"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
)

// recordHost is a host port handler that records the frames it borrows.
type recordHost struct{ got [][]byte }

func (h *recordHost) Receive(f []byte)           { h.got = append(h.got, bytes.Clone(f)) }
func (h *recordHost) LinkChanged(gnet.LinkState) {}

// toHostRig is a bridge with a host port and two NIC ports: frames enter
// on port in, either through the NIC port's handler (which tries
// inputToHost first) or through Input itself (the general path).
type toHostRig struct {
	b        *Bridge
	clk      *clock
	host     *recordHost
	hn       *HostNIC
	in, out  *holdNIC
	inP      int
	outP     int
	viaInput bool
}

func newToHostRig(t *testing.T, viaInput bool, hostV, inV PortVLANs) *toHostRig {
	t.Helper()
	clk := &clock{t: 1e9}
	b, err := New(Config{MAC: brMAC, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	r := &toHostRig{b: b, clk: clk, host: &recordHost{}, in: &holdNIC{}, out: &holdNIC{}, viaInput: viaInput}
	if r.hn, err = b.AddHostPort(hostV); err != nil {
		t.Fatal(err)
	}
	if err := r.hn.Start(r.host); err != nil {
		t.Fatal(err)
	}
	if r.inP, err = b.AttachNIC(r.in, inV); err != nil {
		t.Fatal(err)
	}
	if r.outP, err = b.AttachNIC(r.out, DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *toHostRig) receive(f []byte) {
	if r.viaInput {
		r.b.Input(r.inP, f)
	} else {
		r.in.h.Receive(f)
	}
	r.out.complete()
}

// state is everything a frame's handling can change that the test can
// see: counters, drops, what the host and the other NIC got, what the
// FDB learned.
func (r *toHostRig) state() string {
	s := fmt.Sprintf("drops=%v host=%x out=%d", dropCounts(r.b), r.host.got, len(r.out.held))
	for p := range int(r.b.nport.Load()) {
		st := r.b.PortStats(p)
		s += fmt.Sprintf(" port%d=%d/%d/%d/%d/%d/%d/%d", p, st.RxFrames.Load(), st.RxBytes.Load(), st.Forwarded.Load(),
			st.Flooded.Load(), st.TxFrames.Load(), st.TxBytes.Load(), st.TxDropped.Load())
	}
	for _, vid := range []uint16{1, 10} {
		for _, m := range []gnet.MAC{stA, brMAC, {}} {
			p, ok := r.b.Lookup(vid, m)
			s += fmt.Sprintf(" fdb(%d,%v)=%d,%v", vid, m, p, ok)
		}
	}
	return s
}

func dropCounts(b *Bridge) []uint64 {
	d := make([]uint64, numReasons)
	for i := range d {
		d[i] = b.Stats.Dropped(Reason(i))
	}
	return d
}

// TestInputToHostMatchesInput: frames a NIC port receives, through
// inputToHost where it takes them, have exactly the effects Input's
// general path has: the same counters, drops, deliveries and learned
// stations, under VLAN layouts and port states that allow the shortcut
// and ones that do not, for frames it takes and frames it must leave to
// Input (tagged, priority-tagged, bad framing, a loop, not for the host).
func TestInputToHostMatchesInput(t *testing.T) {
	ipv4 := frame(brMAC, stA, -1, 0, 46)
	withType := func(f []byte, typ uint16) []byte {
		f = bytes.Clone(f)
		f[12], f[13] = byte(typ>>8), byte(typ)
		return f
	}
	frames := map[string][]byte{
		"ipv4":            ipv4,
		"802.3 length":    withType(ipv4, 46),
		"bad length/type": withType(ipv4, 1501),
		"own source":      frame(brMAC, brMAC, -1, 0, 46),
		"zero source":     frame(brMAC, gnet.MAC{}, -1, 0, 46),
		"group source":    frame(brMAC, gnet.MAC{0x03, 0, 0, 0, 0, 0xa}, -1, 0, 46),
		"tagged":          frame(brMAC, stA, 1, 3, 46),
		"priority-tagged": frame(brMAC, stA, 0, 5, 46),
		"full size":       frame(brMAC, stA, -1, 0, 1500),
		"oversize":        frame(brMAC, stA, -1, 0, 1501),
		"header only":     frame(brMAC, stA, -1, 0, 0),
		"short":           frame(brMAC, stA, -1, 0, 0)[:13],
		"to a station":    frame(stB, stA, -1, 0, 46),
		"broadcast":       frame(gnet.MAC{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, stA, -1, 0, 46),
	}
	type layout struct {
		hostV, inV          PortVLANs
		inDown, hostStopped bool
		hostTaggedElsewhere bool
	}
	layouts := map[string]layout{
		"default":            {hostV: DefaultVLANs, inV: DefaultVLANs},
		"access VLAN 10":     {hostV: PortVLANs{PVID: 10, Untagged: []uint16{10}}, inV: PortVLANs{PVID: 10, Untagged: []uint16{10}}},
		"host tagged":        {hostV: PortVLANs{Tagged: []uint16{1}}, inV: DefaultVLANs},
		"host in other VLAN": {hostV: PortVLANs{PVID: 10, Untagged: []uint16{10}}, inV: DefaultVLANs},
		"no PVID on ingress": {hostV: DefaultVLANs, inV: PortVLANs{Tagged: []uint16{1}}},
		"ingress port down":  {hostV: DefaultVLANs, inV: DefaultVLANs, inDown: true},
		"host port stopped":  {hostV: DefaultVLANs, inV: DefaultVLANs, hostStopped: true},
		"ingress tagged too": {hostV: DefaultVLANs, inV: PortVLANs{PVID: 1, Untagged: []uint16{1}, Tagged: []uint16{10}}},
	}
	for ln, l := range layouts {
		for fn, f := range frames {
			t.Run(ln+"/"+fn, func(t *testing.T) {
				var states [2]string
				for i, viaInput := range []bool{true, false} {
					r := newToHostRig(t, viaInput, l.hostV, l.inV)
					if l.inDown {
						r.b.SetLink(r.inP, false)
					}
					if l.hostStopped {
						r.hn.Stop()
					}
					r.receive(f)
					r.clk.advance(2e9) // past the FDB's refresh granularity
					r.receive(f)
					states[i] = r.state()
				}
				if states[0] != states[1] {
					t.Fatalf("general path:\n\t%s\nNIC port's handler:\n\t%s", states[0], states[1])
				}
			})
		}
	}
}

// TestInputToHostTakesRoutedFrames: the shortcut does take the frames it
// is for (so the comparison above covers it), and follows membership
// changes: a host port that leaves the ingress port's VLAN stops getting
// them, one that rejoins gets them again.
func TestInputToHostTakesRoutedFrames(t *testing.T) {
	r := newToHostRig(t, false, DefaultVLANs, DefaultVLANs)
	f := frame(brMAC, stA, -1, 0, 46)
	p := r.b.ports[r.inP]
	if !r.b.toOwnMAC(f) || !r.b.inputToHost(r.inP, p, f, false) {
		t.Fatal("inputToHost left an untagged frame for the host to Input")
	}
	if len(r.host.got) != 1 || !bytes.Equal(r.host.got[0], f) {
		t.Fatalf("host got %x", r.host.got)
	}
	if port, ok := r.b.Lookup(1, stA); !ok || port != r.inP {
		t.Fatalf("station learned on %d, %v", port, ok)
	}
	if err := r.b.SetVLANs(r.hn.Port(), PortVLANs{PVID: 10, Untagged: []uint16{10}}); err != nil {
		t.Fatal(err)
	}
	if r.b.inputToHost(r.inP, p, f, false) {
		t.Fatal("inputToHost took a frame for a host port outside the VLAN")
	}
	if err := r.b.SetVLANs(r.hn.Port(), DefaultVLANs); err != nil {
		t.Fatal(err)
	}
	if !r.b.inputToHost(r.inP, p, f, false) {
		t.Fatal("inputToHost left a frame after the host port rejoined")
	}
	if r.b.inputToHost(r.outP, r.b.ports[r.outP], frame(brMAC, stA, 1, 0, 46), false) {
		t.Fatal("inputToHost took a tagged frame")
	}
}

// FuzzInputToHost: any frame a NIC port receives has the same effects
// through its handler (inputToHost first) as through Input's general path.
func FuzzInputToHost(f *testing.F) {
	f.Add(byte(0), frame(brMAC, stA, -1, 0, 46))
	f.Add(byte(1), frame(brMAC, stA, 1, 0, 46))
	f.Add(byte(2), frame(brMAC, brMAC, -1, 0, 46))
	f.Add(byte(3), frame(stB, stA, -1, 0, 46))
	layouts := [][2]PortVLANs{
		{DefaultVLANs, DefaultVLANs},
		{{Tagged: []uint16{1}}, DefaultVLANs},
		{{PVID: 10, Untagged: []uint16{10}}, {PVID: 10, Untagged: []uint16{10}, Tagged: []uint16{1}}},
		{DefaultVLANs, {Tagged: []uint16{1}}},
	}
	f.Fuzz(func(t *testing.T, layout byte, b []byte) {
		if len(b) > gnet.RxBufSize {
			return // no driver hands over more
		}
		l := layouts[int(layout)%len(layouts)]
		var states [2]string
		for i, viaInput := range []bool{true, false} {
			r := newToHostRig(t, viaInput, l[0], l[1])
			r.receive(b)
			r.receive(b)
			states[i] = r.state()
		}
		if states[0] != states[1] {
			t.Fatalf("general path:\n\t%s\nNIC port's handler:\n\t%s", states[0], states[1])
		}
	})
}
