package arswitch

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
	"github.com/gowrt/gowrt/mdio"
)

func TestCounters(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		a, b := mac(1), mac(2)
		r.send(1, frame(bcast, a, -1, "bc"))
		for i := 0; i < 3; i++ {
			r.send(2, frame(a, b, -1, "uc"))
		}
		r.send(1, frame([6]byte{0x01, 0, 0x5e, 0, 0, 1}, a, -1, "mc"))
		r.send(1, make([]byte, 10)) // runt
		for _, p := range []int{1, 2} {
			got, err := r.sw.Counters(p)
			must(t, err)
			want := r.m.LiveCounters(p)
			check := func(cn Counter, w uint64) {
				t.Helper()
				if !got.Has(cn) {
					t.Errorf("port %d: %v missing", p, cn)
					return
				}
				if got.Val[cn] != w {
					t.Errorf("port %d: %v = %d, model %d", p, cn, got.Val[cn], w)
				}
			}
			check(RxBroad, want.RxBroad)
			check(RxMulti, want.RxMulti)
			check(RxRunt, want.RxRunt)
			check(RxGoodBytes, want.RxGoodBytes)
			check(TxBroad, want.TxBroad)
			check(TxBytes, want.TxBytes)
			check(Filtered, want.Filtered)
			if got.Has(RxUnicast) {
				check(RxUnicast, want.RxUnicast)
				check(TxUnicast, want.TxUnicast)
			}
		}
		c1, _ := r.sw.Counters(1)
		if c1.Val[RxBroad] != 1 || c1.Val[RxMulti] != 1 || c1.Val[RxRunt] != 1 || c1.Val[RxGoodBytes] != 2*64 {
			t.Errorf("port 1 counters %v", c1.Val)
		}
		c2, _ := r.sw.Counters(2)
		if c2.Val[TxBroad] != 1 || c2.Val[RxGoodBytes] != 3*64 {
			t.Errorf("port 2 counters %v", c2.Val)
		}
		if _, err := r.sw.Counters(9); !errors.Is(err, ErrBadPort) {
			t.Errorf("Counters(9): %v", err)
		}
		r.noViolations()
	})
}

func TestPHYAccess(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		id1, err := r.sw.ReadPHY(1, 2)
		must(t, err)
		id2, err := r.sw.ReadPHY(1, 3)
		must(t, err)
		if id1 != 0x004d || id2&0xfff0 != 0xd030 && id2&0xfff0 != 0xd040 {
			t.Errorf("PHY ID %#04x %#04x", id1, id2)
		}
		must(t, r.sw.WritePHY(3, 4, 0x0de1))
		if v := r.m.PHYReg(2, 4); v != 0x0de1 {
			t.Errorf("PHY 2 ANAR %#x after write through port 3", v)
		}
		bmsr, err := r.sw.ReadPHY(2, 1)
		must(t, err)
		if bmsr&4 == 0 {
			t.Errorf("BMSR %#x: no link", bmsr)
		}
		if _, err := r.sw.ReadPHY(0, 1); !errors.Is(err, ErrBadPort) {
			t.Errorf("CPU port PHY: %v", err)
		}
		if _, err := r.sw.ReadPHY(1, 32); !errors.Is(err, mdio.ErrAddress) {
			t.Errorf("reg 32: %v", err)
		}
		r.noViolations()
	})
}

func TestAR8327PHYErrata(t *testing.T) {
	for _, tc := range []struct {
		rev          int
		dbg3d, mmd7c uint16
	}{{1, 0x68a0, 0}, {2, 0x6860, 0}, {4, 0x6860, 0}} {
		m := arswitchsim.New(arswitchsim.AR8327, arswitchsim.Options{Revision: tc.rev})
		sw, err := Attach(cfgFor(m))
		must(t, err)
		if sw.Info().Revision != tc.rev {
			t.Errorf("revision %d", sw.Info().Revision)
		}
		for phy := 0; phy < 5; phy++ {
			if v := m.PHYDebug(phy, 0x3d); v != tc.dbg3d {
				t.Errorf("rev %d PHY %d dbg 0x3d = %#x, want %#x", tc.rev, phy, v, tc.dbg3d)
			}
			if tc.rev >= 2 {
				if v := m.PHYMMD(phy, 3, 0x0d); v != 0x803f {
					t.Errorf("rev %d PHY %d MMD3.0x0d = %#x", tc.rev, phy, v)
				}
			}
		}
	}
}

func TestBoards(t *testing.T) {
	t.Run("DB120", func(t *testing.T) {
		m := newModel(arswitchsim.AR8327)
		b := testDB120
		_, err := Attach(Config{Bus: m, Board: &b, Sleep: m.Clock().Sleep})
		must(t, err)
		if v := m.Peek(r27Pad0Mode); v != padRGMIIEn|padTXDelayEn|padRXDelayEn|1<<padTXDelayShift|2<<padRXDelayShift {
			t.Errorf("PAD0 %#08x", v)
		}
		for i, w := range b.LEDs.Ctrl {
			if v := m.Peek(r27LEDCtrl0 + 4*uint32(i)); v != w {
				t.Errorf("LED_CTRL%d %#08x, want %#08x", i, v, w)
			}
		}
		if m.Peek(r27PowerOnStrip)&pwsLEDOpenEn == 0 {
			t.Error("LED open drain not set")
		}
	})
	t.Run("AP135", func(t *testing.T) {
		m := arswitchsim.New(arswitchsim.AR8327, arswitchsim.Options{Revision: 1})
		b := testAP135
		sw, err := Attach(Config{Bus: m, Board: &b, Sleep: m.Clock().Sleep})
		must(t, err)
		if v := m.Peek(r27Pad6Mode); v != padSGMIIEn {
			t.Errorf("PAD6 %#08x", v)
		}
		if v := m.Peek(r27SGMIICtrl); v&(sgmiiEnPLL|sgmiiEnRX|sgmiiEnTX) != sgmiiEnPLL|sgmiiEnRX|sgmiiEnTX {
			t.Errorf("SGMII_CTRL %#08x on rev 1", v)
		}
		if sw.Info().CPUPorts != Ports(0, 6) {
			t.Errorf("CPU ports %v", sw.Info().CPUPorts)
		}
		st, err := sw.PortStatus(6)
		must(t, err)
		if !st.Link || st.SpeedMbps != 1000 || !st.FullDuplex || st.Auto {
			t.Errorf("port 6 status %+v", st)
		}
	})
	t.Run("TL-WDR4300", func(t *testing.T) {
		m := newModel(arswitchsim.AR8327)
		b := testTLWDR4300
		sw, err := Attach(Config{Bus: m, Board: &b, Sleep: m.Clock().Sleep})
		must(t, err)
		p, err := sw.Port(1)
		must(t, err)
		if p.Label != "wan" || p.PHY != 0 || p.CPU {
			t.Errorf("port 1 %+v", p)
		}
		if m.Peek(r27PowerOnStrip)&pwsLEDOpenEn != 0 {
			t.Error("LED open drain set")
		}
	})
	t.Run("AR8316", func(t *testing.T) {
		for _, tc := range []struct {
			b    Board
			mode uint32
		}{
			{Board{Name: "rgmii", CPU: []CPUPort{{Mode: ModeRGMII}}}, mode8316RGMII},
			{Board{Name: "rgmii-p4", CPU: []CPUPort{{Mode: ModeRGMII}}, PHY4ToCPU: true}, mode8316RGMIIPort4},
			{Board{Name: "gmii", CPU: []CPUPort{{Mode: ModeGMII}}}, mode8316GMII},
		} {
			m := newModel(arswitchsim.AR8316)
			sw, err := Attach(Config{Bus: m, Board: &tc.b, Sleep: m.Clock().Sleep})
			must(t, err)
			if v := m.Peek(r16Mode); v != tc.mode {
				t.Errorf("%s: MODE %#08x, want %#08x", tc.b.Name, v, tc.mode)
			}
			if tc.b.PHY4ToCPU {
				if m.PHYDebug(4, 0x12) != 0x480c || m.PHYDebug(4, 0x5) != 0x3d47 {
					t.Errorf("port 4 RGMII fixup missing")
				}
				if _, err := sw.ReadPHY(5, 2); !errors.Is(err, ErrBadPort) {
					t.Errorf("port 5 with PHY4 given to the CPU: %v", err)
				}
			}
			if m.Peek(r16Magic) != magic8316Init || m.Peek(r16FloodMask) != flood8316Init {
				t.Errorf("%s: AR8316 init values missing", tc.b.Name)
			}
		}
	})
	t.Run("AR934x", func(t *testing.T) {
		m := newModel(arswitchsim.AR934x)
		b := Board{Name: "mii-phy4", CPU: []CPUPort{{Mode: ModeMII}}, PHY4ToCPU: true}
		_, err := Attach(Config{Bus: m, BuiltIn: true, Board: &b, Sleep: m.Clock().Sleep})
		must(t, err)
		if v := m.Peek(r16OperMode0); v&operMode0PHYMIIEn == 0 || v&operMode0MACGMIIEn != 0 {
			t.Errorf("OPER_MODE0 %#08x", v)
		}
		if m.Peek(r16Mode)&operMode1PHY4MIIEn == 0 {
			t.Error("OPER_MODE1.PHY4_MII_EN not set")
		}
		if m.Peek(r16QMCtrl)&qmCtrlARPEn == 0 || m.Peek(r16TagPrio) != tagPrio7240Init {
			t.Error("AR934x init values missing")
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for _, tc := range []struct {
			chip arswitchsim.Chip
			b    Board
		}{
			{arswitchsim.AR8316, Board{Name: "leds", CPU: []CPUPort{{}}, LEDs: &LEDConfig{}}},
			{arswitchsim.AR8316, Board{Name: "port6", CPU: []CPUPort{{Port: 6}}}},
			{arswitchsim.AR8316, Board{Name: "nocpu"}},
			{arswitchsim.AR8316, Board{Name: "sgmii", CPU: []CPUPort{{Mode: ModeSGMII}}}},
			{arswitchsim.AR8327, Board{Name: "phy9", CPU: []CPUPort{{}}, PortPHY: []int{-1, 9}}},
			{arswitchsim.AR8327, Board{Name: "delay", CPU: []CPUPort{{TXDelay: delay(4)}}}},
			{arswitchsim.AR8327, Board{Name: "gmii-pad", CPU: []CPUPort{{Mode: ModeGMII}}}},
		} {
			m := newModel(tc.chip)
			m.Poke(0x070, 0x1234) // something a reset would clear
			before := m.Snapshot()
			if _, err := Attach(Config{Bus: m, BuiltIn: isBuiltIn(tc.chip), Board: &tc.b, Sleep: m.Clock().Sleep}); !errors.Is(err, ErrBoard) {
				t.Errorf("%v %s: %v", tc.chip, tc.b.Name, err)
			}
			if d := before.Diff(m.Snapshot()); d != "" {
				t.Errorf("%v %s: rejected board touched the switch:\n%s", tc.chip, tc.b.Name, d)
			}
		}
	})
}

// idBus answers MASK_CTRL reads (page 0, PHY 0x10 regs 0/1) from a
// script and forwards everything else to a model.
type idBus struct {
	*arswitchsim.Switch
	ids []uint32
	n   int
}

func (b *idBus) Read(phy, reg int) (uint16, error) {
	if phy == 0x10 && reg <= 1 && len(b.ids) > 0 {
		v := b.ids[min(b.n/2, len(b.ids)-1)]
		b.n++
		if reg == 1 {
			return uint16(v >> 16), nil
		}
		return uint16(v), nil
	}
	return b.Switch.Read(phy, reg)
}

func TestIdentification(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ids     []uint32
		builtIn bool
		want    error
	}{
		{"no switch", []uint32{0xffffffff}, false, ErrUnstableID},
		{"unstable", []uint32{0x1001, 0x1001, 0x1001, 0x1201}, false, ErrUnstableID},
		{"AR8236", []uint32{0x0301}, false, ErrUnknownChip},
		{"AR8226", []uint32{0x0201}, false, ErrUnknownChip},
		{"unknown built-in", []uint32{0x1001}, true, ErrUnknownChip},
	} {
		m := newModel(arswitchsim.AR8316)
		_, err := Attach(Config{Bus: &idBus{Switch: m, ids: tc.ids}, BuiltIn: tc.builtIn, Sleep: m.Clock().Sleep})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Attach(Config{}); err == nil {
		t.Error("Attach without bus succeeded")
	}
}

// stuckBus makes one register's high half always read with bit 15 set
// (bit 31 of the register: BUSY on the AR8327 units).
type stuckBus struct {
	*arswitchsim.Switch
	page     uint16
	addr     uint32
	stuckBit uint16
}

func (b *stuckBus) Write(phy, reg int, val uint16) error {
	if phy == 0x18 && reg == 0 {
		b.page = val
	}
	return b.Switch.Write(phy, reg, val)
}

func (b *stuckBus) Read(phy, reg int) (uint16, error) {
	v, err := b.Switch.Read(phy, reg)
	if phy >= 0x10 && phy <= 0x17 {
		addr := uint32(b.page)<<9 | uint32(phy&7)<<6 | uint32(reg&0x1e)<<1
		if addr == b.addr && reg&1 == 1 {
			v |= b.stuckBit
		}
	}
	return v, err
}

func TestBusyTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr uint32
		do   func(sw *Switch) error
	}{
		{"VTU", r27VTUFunc1, func(sw *Switch) error { return sw.SetVLANMode(ModeDot1Q) }},
		{"ATU", r27ATUFunc, func(sw *Switch) error { return sw.FlushATU() }},
		{"MIB", r27MIBFunc, func(sw *Switch) error { _, err := sw.Counters(1); return err }},
	} {
		m := newModel(arswitchsim.AR8327)
		b := &stuckBus{Switch: m}
		sw, err := Attach(Config{Bus: b, Sleep: m.Clock().Sleep})
		must(t, err)
		b.addr, b.stuckBit = tc.addr, 0x8000
		if tc.name == "MIB" {
			b.stuckBit = 0x0002 // bit 17
		}
		if err := tc.do(sw); !errors.Is(err, ErrBusy) {
			t.Errorf("%s stuck busy: %v", tc.name, err)
		}
	}
	// Stuck soft reset.
	m := newModel(arswitchsim.AR8316)
	b := &stuckBus{Switch: m, addr: regMaskCtrl, stuckBit: 0x8000}
	if _, err := Attach(Config{Bus: b, Sleep: m.Clock().Sleep}); !errors.Is(err, ErrBusy) {
		t.Errorf("stuck reset: %v", err)
	}
}

func TestATUDump(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		for i := 1; i <= 4; i++ {
			r.send(i, frame(bcast, mac(byte(i)), -1, "hello"))
		}
		got, err := r.sw.ATU()
		must(t, err)
		if len(got) != 4 {
			t.Fatalf("ATU has %d entries, want 4: %v", len(got), got)
		}
		for _, e := range got {
			p := int(e.MAC[5])
			if e.Ports != Ports(p) || e.Static || e.Age != 7 {
				t.Errorf("entry %v: want port %d dynamic age 7", e, p)
			}
			if r.sw.ops.perVLANTagging() && e.VID != 1 {
				t.Errorf("entry %v: VID %d", e, e.VID)
			}
		}
		must(t, r.sw.FlushATUPort(2))
		got, _ = r.sw.ATU()
		if len(got) != 3 {
			t.Errorf("after port flush: %v", got)
		}
		must(t, r.sw.FlushATU())
		got, _ = r.sw.ATU()
		if len(got) != 0 {
			t.Errorf("after flush: %v", got)
		}
		r.noViolations()
	})
}

func TestPollLinks(t *testing.T) {
	r := newRig(t, arswitchsim.AR8327)
	ch, err := r.sw.PollLinks()
	must(t, err)
	if len(ch) != 5 { // ports 1-5 have PHYs; 6 is not a CPU port on DB120 and has no PHY
		t.Fatalf("first poll: %v", ch)
	}
	r.m.SetLink(3, false)
	ch, err = r.sw.PollLinks()
	must(t, err)
	if len(ch) != 1 || ch[0] != (LinkChange{Port: 3, Up: false}) {
		t.Fatalf("after unplug: %v", ch)
	}
	p, _ := r.sw.Port(3)
	if p.Status.Link || !p.Status.Auto {
		t.Errorf("port 3 status %+v", p.Status)
	}
	p, _ = r.sw.Port(0)
	if !p.Status.Link || p.Status.SpeedMbps != 1000 || !p.CPU {
		t.Errorf("CPU port %+v", p)
	}
}

// TestConcurrentUse exercises the API from several goroutines (run with
// -race): the driver lock and the bus lock must keep paged accesses whole.
func TestConcurrentUse(t *testing.T) {
	r := newRig(t, arswitchsim.AR8327)
	must(t, r.sw.SetVLANMode(ModeDot1Q))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				var err error
				switch g {
				case 0:
					_, err = r.sw.PollLinks()
				case 1:
					_, err = r.sw.Counters(1 + i%5)
				case 2:
					err = r.sw.SetVLANGroup(1, VLANGroup{VID: 100 + i, Members: Ports(0, 5), Untagged: Ports(5)})
				case 3:
					_, err = r.sw.ReadPHY(1, 2)
				}
				if err != nil {
					errs <- err
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.noViolations()
	g, _ := r.sw.VLANGroup(1)
	vl := r.m.VLANs()
	if len(vl) != 2 || vl[1].VID != g.VID {
		t.Errorf("VTU %+v, group %+v", vl, g)
	}
	_ = time.Second
}

// endlessATU reports every get-next result as a live entry: a broken chip
// whose table never ends. The dump must stop with an error.
type endlessATU struct {
	*arswitchsim.Switch
	page uint16
}

func (b *endlessATU) Write(phy, reg int, val uint16) error {
	if phy == 0x18 && reg == 0 {
		b.page = val
	}
	return b.Switch.Write(phy, reg, val)
}

func (b *endlessATU) Read(phy, reg int) (uint16, error) {
	v, err := b.Switch.Read(phy, reg)
	addr := uint32(b.page)<<9 | uint32(phy&7)<<6 | uint32(reg&0x1e)<<1
	if phy >= 0x10 && phy <= 0x17 && addr == r16ATUCtrl2 {
		if reg&1 == 1 {
			v = 0x0007 // status 7
		} else {
			v = 0x0002 // port 1
		}
	}
	return v, err
}

func TestATUDumpBounded(t *testing.T) {
	m := newModel(arswitchsim.AR8316)
	b := &endlessATU{Switch: m}
	sw, err := Attach(Config{Bus: b, Sleep: m.Clock().Sleep})
	must(t, err)
	got, err := sw.ATU()
	if !errors.Is(err, ErrBadEntry) {
		t.Fatalf("endless table: %v", err)
	}
	if len(got) != r16ATUEntries+1 {
		t.Errorf("returned %d entries", len(got))
	}
}

func TestRawRegisterAccess(t *testing.T) {
	r := newRig(t, arswitchsim.AR8327)
	must(t, r.sw.WriteReg(r27LEDCtrl0+12, 0xcafe1234))
	v, err := r.sw.ReadReg(r27LEDCtrl0 + 12)
	must(t, err)
	if v != 0xcafe1234 || r.m.Peek(r27LEDCtrl0+12) != 0xcafe1234 {
		t.Errorf("readback %#x", v)
	}
	for _, a := range []uint32{0x3, 0x40000} {
		if _, err := r.sw.ReadReg(a); err == nil {
			t.Errorf("ReadReg(%#x) succeeded", a)
		}
	}
}

func TestBoardClone(t *testing.T) {
	c := testAP135.Clone()
	*c.CPU[0].TXDelay = 3
	c.CPU[1].Mode = ModeRGMII
	c.LEDs = &LEDConfig{}
	if *testAP135.CPU[0].TXDelay != 1 || testAP135.CPU[1].Mode != ModeSGMII || testAP135.LEDs != nil {
		t.Fatal("Clone shares state with the profile")
	}
	w := testTLWDR4300.Clone()
	w.Labels[1] = "x"
	w.LEDs.Ctrl[0] = 0
	if testTLWDR4300.Labels[1] != "wan" || testTLWDR4300.LEDs.Ctrl[0] == 0 {
		t.Fatal("Clone shares slices or LEDs")
	}
}
