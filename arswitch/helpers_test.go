package arswitch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
)

// rig is a driver attached to a model with every egress recorded.
type rig struct {
	t   *testing.T
	m   *arswitchsim.Switch
	sw  *Switch
	rec *arswitchsim.Recorder
}

func isBuiltIn(c arswitchsim.Chip) bool {
	return c == arswitchsim.AR7240 || c == arswitchsim.AR934x
}

func boardFor(c arswitchsim.Chip) *Board {
	switch c {
	case arswitchsim.AR8327, arswitchsim.AR8337:
		b := testDB120
		return &b
	}
	return nil
}

func newModel(c arswitchsim.Chip) *arswitchsim.Switch {
	return arswitchsim.New(c, arswitchsim.Options{})
}

func cfgFor(m *arswitchsim.Switch) Config {
	return Config{Bus: m, BuiltIn: isBuiltIn(m.Chip()), Board: boardFor(m.Chip()), Sleep: m.Clock().Sleep}
}

func newRig(t *testing.T, c arswitchsim.Chip) *rig {
	t.Helper()
	m := newModel(c)
	sw, err := Attach(cfgFor(m))
	if err != nil {
		t.Fatalf("%v: Attach: %v", c, err)
	}
	r := &rig{t: t, m: m, sw: sw, rec: &arswitchsim.Recorder{}}
	r.rec.Record(m)
	for p := 1; p < m.NumPorts(); p++ {
		m.SetLink(p, true)
	}
	if v := m.Violations(); len(v) > 0 {
		t.Fatalf("%v: register violations during attach:\n%v", c, v)
	}
	return r
}

// forEachChip runs f as a subtest per modelled chip.
func forEachChip(t *testing.T, f func(t *testing.T, c arswitchsim.Chip)) {
	for _, c := range arswitchsim.Chips {
		t.Run(c.String(), func(t *testing.T) { f(t, c) })
	}
}

func mac(n byte) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, n} }

var bcast = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// frame builds an Ethernet frame; vid < 0 means untagged.
func frame(dst, src [6]byte, vid int, payload string) []byte {
	b := append(dst[:], src[:]...)
	if vid >= 0 {
		b = binary.BigEndian.AppendUint16(b, 0x8100)
		b = binary.BigEndian.AppendUint16(b, uint16(vid))
	}
	b = binary.BigEndian.AppendUint16(b, 0x0800)
	b = append(b, payload...)
	for len(b) < 60 {
		b = append(b, 0)
	}
	return b
}

// send injects a frame and returns, per port, what left it.
func (r *rig) send(in int, f []byte) map[int][][]byte {
	r.t.Helper()
	r.rec.Reset()
	r.m.Inject(in, f)
	out := map[int][][]byte{}
	for p := 0; p < r.m.NumPorts(); p++ {
		if fr := r.rec.Take(p); len(fr) > 0 {
			out[p] = fr
		}
	}
	return out
}

// expect checks that exactly the ports in want received one frame each,
// with the given tag (-1 untagged) and payload preserved.
func (r *rig) expect(what string, got map[int][][]byte, want map[int]int, payload string) {
	r.t.Helper()
	for p := 0; p < r.m.NumPorts(); p++ {
		vid, ok := want[p]
		fr := got[p]
		if !ok {
			if len(fr) != 0 {
				r.t.Errorf("%s: port %d received %d frame(s), want none", what, p, len(fr))
			}
			continue
		}
		if len(fr) != 1 {
			r.t.Errorf("%s: port %d received %d frames, want 1", what, p, len(fr))
			continue
		}
		gv := tagOf(fr[0])
		if gv != vid {
			r.t.Errorf("%s: port %d frame tag %d, want %d (-1 = untagged)", what, p, gv, vid)
		}
		if !bytes.Contains(fr[0], []byte(payload)) {
			r.t.Errorf("%s: port %d payload lost", what, p)
		}
	}
}

func tagOf(f []byte) int {
	if len(f) >= 18 && binary.BigEndian.Uint16(f[12:]) == 0x8100 {
		return int(binary.BigEndian.Uint16(f[14:]) & 0xfff)
	}
	return -1
}

func ports(ps ...int) map[int]int {
	m := map[int]int{}
	for _, p := range ps {
		m[p] = -1
	}
	return m
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (r *rig) noViolations() {
	r.t.Helper()
	if v := r.m.Violations(); len(v) > 0 {
		r.t.Fatalf("register violations:\n%v", fmt.Sprint(v))
	}
}
