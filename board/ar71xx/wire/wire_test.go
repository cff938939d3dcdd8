package wire_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/wire"
	"github.com/gowrt/gowrt/board/sim"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/vlan"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

var base = gnet.MAC{0x02, 0x00, 0x67, 0x77, 0x72, 0xfe}

// twin builds the hardware models of b (no cables).
func twin(t *testing.T, b *boardfile.Board) *sim.Twin {
	t.Helper()
	tw, err := sim.NewTwin(b, sim.TwinConfig{Seed: 3, Log: func(f string, a ...any) { t.Logf(f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tw.Close() })
	return tw
}

// copyOf returns a copy of b whose slices the test may change.
func copyOf(b *boardfile.Board) *boardfile.Board {
	c := *b
	c.Eth = append([]boardfile.Eth(nil), b.Eth...)
	c.Ports = append([]boardfile.Port(nil), b.Ports...)
	if b.Switch != nil {
		sw := *b.Switch
		sw.VLANs = nil
		for _, v := range b.Switch.VLANs {
			v.Ports = append([]int(nil), v.Ports...)
			v.Tagged = append([]int(nil), v.Tagged...)
			sw.VLANs = append(sw.VLANs, v)
		}
		c.Switch = &sw
	}
	return &c
}

// TestPorts: every board's description wires on its twin: ports in
// description order with the description's roles, the trunk children for
// ports with a VID, the MAC addresses base and base+1.
func TestPorts(t *testing.T) {
	for _, b := range boardfile.All {
		t.Run(b.Name, func(t *testing.T) {
			tw := twin(t, b)
			w, err := wire.Ports(b, tw.Hardware(), base)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if len(w.Ports) != len(b.Ports) {
				t.Fatalf("%d ports, want %d", len(w.Ports), len(b.Ports))
			}
			wan := base
			wan[5]++
			for i, p := range w.Ports {
				d := b.Ports[i]
				if p.Name != d.Name || p.Role != d.Role {
					t.Errorf("port %d is %s/%v, want %s/%v", i, p.Name, p.Role, d.Name, d.Role)
				}
				_, isChild := p.NIC.(*vlan.Port)
				if isChild != (d.VID != 0) {
					t.Errorf("port %s: VLAN child %v, VID %d", d.Name, isChild, d.VID)
				}
				want := base
				if d.Role.String() == "wan" && d.VID == 0 {
					want = wan
				}
				if got := p.NIC.MACAddress(); got != want {
					t.Errorf("port %s: MAC %v, want %v", d.Name, got, want)
				}
			}
			if (w.Switch == nil) != (b.Switch == nil) {
				t.Errorf("switch %v, description %v", w.Switch, b.Switch)
			}
			// The CPU MACs see the fixed link at once; followed PHYs
			// (no cable) report none.
			for _, e := range b.Eth {
				got := w.NICs[e.Unit].Link()
				if e.SwitchPort >= 0 && got != wire.CPULink {
					t.Errorf("GE%d (switch port %d): link %+v, want %+v", e.Unit, e.SwitchPort, got, wire.CPULink)
				}
			}
			if n, err := w.LinkErrors(); n != 0 {
				t.Errorf("link polls failed %d times: %v", n, err)
			}
			if v := tw.Switch; v != nil && len(v.Violations()) != 0 {
				t.Errorf("switch model violations: %v", v.Violations())
			}
			if tw.Misuses() != 0 {
				t.Errorf("%d hardware misuses", tw.Misuses())
			}
		})
	}
}

// TestViolationsAreSeen: the switch model's rule check the twin tests
// rely on does fire (a port state the chip does not have).
func TestViolationsAreSeen(t *testing.T) {
	tw := twin(t, boardfile.ArcherC7v2)
	w, err := wire.Ports(boardfile.ArcherC7v2, tw.Hardware(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	const portLookup1 = 0x66c // AR8327 PORT_LOOKUP_CTRL of port 1 (0x660 + 0xc)
	if err := w.Switch.WriteReg(portLookup1, 7<<16); err != nil {
		t.Fatal(err)
	}
	if len(tw.Switch.Violations()) == 0 {
		t.Fatal("a port state of 7 went unnoticed by the model")
	}
}

// failingHW is a twin's hardware with one method failing.
type failingHW struct {
	wire.Hardware
	soc, mac, irq bool
}

var errHW = errors.New("test: hardware refuses")

func (f failingHW) SoC() (*ar71xx.SoC, error) {
	if f.soc {
		return nil, errHW
	}
	return f.Hardware.SoC()
}

func (f failingHW) MAC(u ar71xx.EthUnit) (barrier.Space, error) {
	if f.mac {
		return nil, errHW
	}
	return f.Hardware.MAC(u)
}

func (f failingHW) Interrupt(u ar71xx.EthUnit, name string, h func()) error {
	if f.irq {
		return errHW
	}
	return f.Hardware.Interrupt(u, name, h)
}

// TestErrors: bad descriptions and hardware that does not answer give
// errors, never panics.
func TestErrors(t *testing.T) {
	cases := []struct {
		name  string
		hw    *boardfile.Board // the twin's hardware
		desc  func(*boardfile.Board)
		fail  failingHW
		want  string
		isErr error
	}{
		{name: "invalid", hw: boardfile.ArcherC7v2, desc: func(b *boardfile.Board) { b.Eth[0].Unit = 2 }, isErr: boardfile.ErrInvalid},
		{name: "vid-untagged-cpu", hw: boardfile.TLWDR4300, desc: func(b *boardfile.Board) { b.Switch.VLANs[1].Tagged = nil }, isErr: wire.ErrBoard},
		{name: "shared-mac-no-vid", hw: boardfile.TLWDR4300, desc: func(b *boardfile.Board) {
			b.Ports[0].VID, b.Ports[1].VID = 0, 0
		}, isErr: wire.ErrBoard},
		{name: "wrong-soc", hw: boardfile.AP135, desc: func(b *boardfile.Board) { b.Rev = ar71xx.RevMajor9344 }, want: "the SoC is"},
		{name: "wrong-switch", hw: boardfile.ArcherC7v2, desc: func(b *boardfile.Board) { b.Switch.Chip = arswitch.ChipAR8316 }, want: "says an AR8316 switch"},
		{name: "no-switch-there", hw: boardfile.ArcherC7v2, desc: func(b *boardfile.Board) { b.Switch.MDIOUnit = 1 }, isErr: arswitch.ErrUnstableID},
		{name: "no-phy-there", hw: boardfile.RSPro, desc: func(b *boardfile.Board) { b.Eth[1].PHYUnit = 1 }, want: "PHY 4"},
		{name: "soc-fails", hw: boardfile.Carambola2, fail: failingHW{soc: true}, isErr: errHW},
		{name: "mac-fails", hw: boardfile.Carambola2, fail: failingHW{mac: true}, isErr: errHW},
		{name: "irq-fails", hw: boardfile.Carambola2, fail: failingHW{irq: true}, isErr: errHW},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tw := twin(t, c.hw)
			d := copyOf(c.hw)
			if c.desc != nil {
				c.desc(d)
			}
			hw := c.fail
			hw.Hardware = tw.Hardware()
			start := time.Now()
			w, err := wire.Ports(d, hw, base)
			if err == nil {
				w.Close()
				t.Fatal("no error")
			}
			if c.isErr != nil && !errors.Is(err, c.isErr) {
				t.Fatalf("error %v, want one wrapping %v", err, c.isErr)
			}
			if c.want != "" && !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			t.Logf("%v (%v)", err, time.Since(start).Round(time.Millisecond))
		})
	}
	if _, err := wire.Ports(nil, nil, base); err == nil {
		t.Fatal("nil board: no error")
	}
}
