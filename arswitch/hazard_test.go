package arswitch

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/arswitch/arswitchsim"
	"github.com/gowrt/gowrt/mdio"
)

// unicastFloodSeen runs two hosts talking to each other on ports 1 and 2
// and counts the frames an idle port 3 sees after the first broadcast.
func unicastFloodSeen(r *rig) int {
	a, b := mac(1), mac(2)
	r.send(1, frame(bcast, a, -1, "who-has"))
	n := 0
	for i := 0; i < 4; i++ {
		n += len(r.send(2, frame(a, b, -1, "reply"))[3])
		n += len(r.send(1, frame(b, a, -1, "data"))[3])
	}
	return n
}

// TestHazardPerPortGroupsFlood: "all ports in one VLAN" built as one group
// per port with per-port default VIDs (OpenWrt's "VLAN disabled" layout)
// makes the AR8327, which learns per VID, flood every unicast frame. The
// driver uses one shared group and the model sees no flooding.
func TestHazardPerPortGroupsFlood(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		if n := unicastFloodSeen(r); n != 0 {
			t.Fatalf("driver's single-group mode: idle port saw %d unicast frames", n)
		}

		// The wrong driver: every port its own group, PVID = port number.
		r = newRig(t, c)
		r.sw.mu.Lock()
		for p, h := range r.sw.hw.ports {
			h.pvid = p + 1
			must(t, r.sw.ops.writePort(p, h))
		}
		r.sw.mu.Unlock()
		n := unicastFloodSeen(r)
		if r.sw.ops.perVLANTagging() { // AR8327/AR8337: independent VLAN learning
			if n == 0 {
				t.Fatal("per-port groups: model showed no unicast flooding")
			}
			t.Logf("per-port groups: idle port saw %d unicast frames (want 0)", n)
		} else if n != 0 {
			// The AR8216 family's ATU has no VID: learning is shared
			// and the wrong layout happens not to flood there.
			t.Fatalf("shared-learning chip flooded %d frames", n)
		}
	})
}

// moveHost learns host H on port 1, moves it to port 2 (port 1 unplugged)
// and reports whether a frame for H from port 3 reaches port 2.
func moveHost(r *rig, poll func()) bool {
	h, peer := mac(7), mac(3)
	r.send(1, frame(bcast, h, -1, "h-hello"))
	r.send(3, frame(bcast, peer, -1, "peer-hello"))
	r.m.SetLink(1, false)
	poll()
	r.m.SetLink(2, true)
	poll()
	got := r.send(3, frame(h, peer, -1, "to-h"))
	return len(got[2]) == 1
}

// TestHazardNoATUFlushOnLinkChange: the chip keeps a moved host's address
// on the old, dead port; without a flush on link down the host is
// unreachable until the entry ages out.
func TestHazardNoATUFlushOnLinkChange(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		r := newRig(t, c)
		if _, err := r.sw.PollLinks(); err != nil {
			t.Fatal(err)
		}
		if !moveHost(r, func() {
			if _, err := r.sw.PollLinks(); err != nil {
				t.Fatal(err)
			}
		}) {
			t.Fatal("driver: moved host unreachable")
		}

		// Wrong driver: tracks link state but never flushes.
		r = newRig(t, c)
		wrongPoll := func() {
			for p := 1; p < r.m.NumPorts(); p++ {
				if _, err := r.sw.PortStatus(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		if moveHost(r, wrongPoll) {
			t.Fatal("no flush: model delivered to the moved host anyway")
		}
		// …until aging removes the stale entry (≈5 min).
		r.m.Advance(6 * time.Minute)
		if got := r.send(3, frame(mac(7), mac(3), -1, "later")); len(got[2]) != 1 {
			t.Fatal("stale entry did not age out")
		}
	})
}

// TestHazardHalfOrder: writing the halves of a 32-bit register in the wrong
// order for the chip commits a mix of the new half and a stale latch.
func TestHazardHalfOrder(t *testing.T) {
	for _, c := range []arswitchsim.Chip{arswitchsim.AR8327, arswitchsim.AR8337, arswitchsim.AR8316, arswitchsim.AR934x} {
		t.Run(c.String(), func(t *testing.T) {
			m := newModel(c)
			builtIn := isBuiltIn(c)
			right := pageLocFor(builtIn, map[bool]ChipID{true: ChipAR8327, false: ChipAR8316}[c == arswitchsim.AR8327 || c == arswitchsim.AR8337])
			const reg, val = 0x070, 0x12345678 // plain RW register on both layouts (TAG_PRIO / MAX_FRAME area)
			addr := uint32(reg)
			if c == arswitchsim.AR8327 || c == arswitchsim.AR8337 {
				addr = r27LEDCtrl0 + 8 // LED_CTRL2
			}
			for _, tc := range []struct {
				name  string
				loc   pageLoc
				wrong bool
			}{{"right", right, false}, {"wrong", pageLoc{right.phy, right.reg, !right.loFirst}, true}} {
				m.ClearViolations()
				pg := newPaged(m, tc.loc, m.Clock().Sleep)
				// A previous access leaves something in the write latch.
				must(t, pg.write(addr, 0xaaaabbbb))
				must(t, pg.write(addr, val))
				got, err := pg.read(addr)
				must(t, err)
				if tc.wrong {
					if got == val {
						t.Fatalf("wrong order read back %#x: model did not catch it", got)
					}
					if len(m.Violations()) == 0 {
						t.Fatal("wrong order: no violation recorded")
					}
					t.Logf("wrong half order: wrote %#x, read %#x", uint32(val), got)
				} else if got != val || len(m.Violations()) != 0 {
					t.Fatalf("right order: read %#x, violations %v", got, m.Violations())
				}
			}
		})
	}
}

// TestHazardPageSettle: a register access right after a page write, without
// the settle delay, still reaches the old page.
func TestHazardPageSettle(t *testing.T) {
	m := newModel(arswitchsim.AR8327)
	loc := pageLocFor(false, ChipAR8327)
	// Two registers on different pages with distinct contents.
	m.Poke(r27LEDCtrl0, 0x11111111)      // page 0
	m.Poke(r27PortVLAN0Base, 0x00010001) // page 2
	for _, tc := range []struct {
		name  string
		sleep func(time.Duration)
	}{{"right", m.Clock().Sleep}, {"no settle", func(time.Duration) {}}} {
		pg := newPaged(m, loc, tc.sleep)
		a, err := pg.read(r27LEDCtrl0)
		must(t, err)
		b, err := pg.read(r27PortVLAN0Base)
		must(t, err)
		ok := a == 0x11111111 && b == 0x00010001
		if tc.name == "right" && !ok {
			t.Fatalf("with settle: read %#x %#x", a, b)
		}
		if tc.name != "right" && ok {
			t.Fatal("without settle: model returned the right values")
		}
		m.Clock().Sleep(10 * time.Millisecond)
	}
}

// TestHazardBuiltInPageRegister: the AR934x built-in switch takes its page
// at PHY 0x1f reg 0x10; using the external chips' PHY 0x18 reg 0 (as
// FreeBSD does for every chip) reads the wrong page.
func TestHazardBuiltInPageRegister(t *testing.T) {
	for _, tc := range []struct {
		name string
		loc  pageLoc
	}{{"right", pageLocFor(true, ChipAR934x)}, {"wrong", pageLocFor(false, ChipAR8316)}} {
		m := newModel(arswitchsim.AR934x)
		m.Poke(r16PortVLANBase+r16PortStride*2, 0x003e0007) // on page 1
		pg := newPaged(m, tc.loc, m.Clock().Sleep)
		v, err := pg.read(r16PortVLANBase + r16PortStride*2)
		must(t, err)
		if (v == 0x003e0007) != (tc.name == "right") {
			t.Fatalf("%s page register: read %#x", tc.name, v)
		}
	}
}

// buggyRMW is the AR934x bring-up bug: a read-modify-write that always sets
// bit 0.
type buggyRMW struct{ regIO }

func (b buggyRMW) rmw(addr, clear, set uint32) error { return b.regIO.rmw(addr, clear, set|1) }

// TestHazardRMWSetsBit0: the model's register-level checks catch the bad
// RMW during attach (reserved CPU_PORT bits, invalid port state 5).
func TestHazardRMWSetsBit0(t *testing.T) {
	forEachChip(t, func(t *testing.T, c arswitchsim.Chip) {
		m := newModel(c)
		if _, err := attach(cfgFor(m), nil); err != nil {
			t.Fatal(err)
		}
		if v := m.Violations(); len(v) != 0 {
			t.Fatalf("right RMW: %v", v)
		}
		m = newModel(c)
		if _, err := attach(cfgFor(m), func(io regIO) regIO { return buggyRMW{io} }); err != nil {
			t.Fatal(err)
		}
		v := m.Violations()
		if len(v) == 0 {
			t.Fatal("RMW setting bit 0: no violation recorded")
		}
		t.Logf("%d violations, first: %s", len(v), v[0])
	})
}

// hiddenLock hides the model's mdio.Locker: two drivers then each lock only
// themselves.
type hiddenLock struct{ b mdio.Bus }

func (h hiddenLock) Read(phy, reg int) (uint16, error)    { return h.b.Read(phy, reg) }
func (h hiddenLock) Write(phy, reg int, val uint16) error { return h.b.Write(phy, reg, val) }

// interleave runs hook after the first transaction it sees.
type interleave struct {
	mdio.Bus
	once sync.Once
	hook func()
}

func (i *interleave) Write(phy, reg int, val uint16) error {
	err := i.Bus.Write(phy, reg, val)
	if phy >= 0x10 && phy <= 0x17 {
		i.once.Do(i.hook)
	}
	return err
}

func (i *interleave) Lock()   { i.Bus.(mdio.Locker).Lock() }
func (i *interleave) Unlock() { i.Bus.(mdio.Locker).Unlock() }

// TestHazardUnlockedPagedAccess: the chip has one write latch, so another
// bus user slipping a 32-bit write between the two halves of ours corrupts
// both registers. Holding the bus's Locker across the sequence prevents it.
func TestHazardUnlockedPagedAccess(t *testing.T) {
	const a1, a2 = r27LEDCtrl0, r27LEDCtrl0 + 4
	for _, locked := range []bool{true, false} {
		m := newModel(arswitchsim.AR8327)
		loc := pageLocFor(false, ChipAR8327)
		var bus mdio.Bus = m
		if !locked {
			bus = hiddenLock{m}
		}
		other := newPaged(bus, loc, m.Clock().Sleep)
		var wg sync.WaitGroup
		il := &interleave{Bus: bus}
		il.hook = func() {
			wg.Add(1)
			go func() { defer wg.Done(); _ = other.write(a2, 0x22222222) }()
			if !locked {
				wg.Wait() // let it run between our halves
			}
		}
		var ours *paged
		if locked {
			ours = newPaged(il, loc, m.Clock().Sleep)
		} else {
			ours = newPaged(struct{ mdio.Bus }{il}, loc, m.Clock().Sleep)
		}
		must(t, ours.write(a1, 0x11111111))
		wg.Wait()
		v1, v2 := m.Peek(a1), m.Peek(a2)
		good := v1 == 0x11111111 && v2 == 0x22222222
		if locked && !good {
			t.Fatalf("locked: %#x %#x", v1, v2)
		}
		if !locked {
			if good {
				t.Fatal("unlocked interleaving: model did not corrupt")
			}
			if !strings.Contains(strings.Join(m.Violations(), "\n"), "first half") {
				t.Errorf("no split-write violation: %v", m.Violations())
			}
		}
	}
}

// TestHazardMasterEnDisconnects: on the AR8327 the MDIO master's MASTER_EN
// bit cuts the direct MDIO path to the internal PHYs (qca8k). The master
// access must drop MASTER_EN after every operation; one that leaves it set
// makes the next direct PHY access read all ones.
func TestHazardMasterEnDisconnects(t *testing.T) {
	for _, leave := range []bool{false, true} {
		m := newModel(arswitchsim.AR8327)
		pg := newPaged(m, pageLocFor(false, ChipAR8327), m.Clock().Sleep)
		master := masterPHY{io: pg, reg: r27MDIOCtrl, sleep: m.Clock().Sleep}
		direct := directPHY{pg}
		var id uint16
		var err error
		if leave {
			// Wrong: issue the read and poll, but never clear the register.
			must(t, pg.write(r27MDIOCtrl, mdioBusy|mdioMasterEn|mdioRead|1<<mdioPHYShift|2<<mdioRegShift))
			m.Clock().Sleep(time.Millisecond)
			v, err := pg.read(r27MDIOCtrl)
			must(t, err)
			id = uint16(v)
		} else {
			id, err = master.readPHY(1, 2)
			must(t, err)
		}
		if id != 0x004d {
			t.Fatalf("master read of PHY ID: %#x", id)
		}
		d, err := direct.readPHY(1, 2)
		must(t, err)
		if leave && d != 0xffff {
			t.Fatalf("MASTER_EN left set: direct read %#x, model should have cut the path", d)
		}
		if !leave && d != 0x004d {
			t.Fatalf("direct read after master access: %#x", d)
		}
	}
}
