package usbport

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/soc/ar71xx/ar71xxsim"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/ehci/ehcisim"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// regFile is a plain register block (the AR71xx USB control block).
type regFile struct{ v [2]uint32 }

func (r *regFile) ReadReg(off uint32, _ int) uint32 { return r.v[off/4%2] }
func (r *regFile) WriteReg(off uint32, _ int, v uint32) {
	r.v[off/4%2] = v
}

// models is a board's SoC and USB as hardware models: Hardware for Start.
type models struct {
	sys     *hwsim.System
	socM    *ar71xxsim.SoC
	soc     *ar71xx.SoC
	disp    *intr.Dispatcher
	hcs     map[int]*ehcisim.Controller
	regions map[int]*hwsim.Region
	ctrl    *regFile
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newModels(t *testing.T, b *boardfile.Board, seed uint64) *models {
	t.Helper()
	m := &models{sys: hwsim.New(hwsim.Config{Seed: seed, BigEndianCPU: true, NoEviction: true}),
		hcs: map[int]*ehcisim.Controller{}, regions: map[int]*hwsim.Region{}, stop: make(chan struct{})}
	var err error
	if m.socM, err = ar71xxsim.New(m.sys, ar71xxsim.Config{Rev: b.Rev}); err != nil {
		t.Fatal(err)
	}
	if m.soc, err = ar71xx.Probe(m.socM.Regions()); err != nil {
		t.Fatal(err)
	}
	var slept atomic.Int64
	m.soc.Delay = func(d time.Duration) { slept.Add(int64(d)) } // the bring-up's waits, counted
	m.sys.OnMisuse(func(x hwsim.Misuse) { t.Errorf("misuse: %v", x) })
	cpu := m.sys.NewController(hwsim.ControllerConfig{Name: "cpu", Lines: 6})
	m.disp = intr.NewDispatcher(cpu, cpu)
	m.ctrl = &regFile{}
	for _, u := range m.socM.Info.USB().Units {
		caplen := uint32(0x20)
		if u.IntegratedTT {
			caplen = 0x40
		}
		hc := ehcisim.New(m.sys, cpu, ehcisim.Config{Ports: max(1, b.USBRootPorts(u.Unit)), Companions: u.Companions,
			IntegratedTT: u.IntegratedTT, CapLength: caplen, RegOrder: u.RegOrder, DescOrder: u.DescOrder,
			Line: u.IRQ, SynopsysIAABug: u.SynopsysIAABug})
		m.hcs[u.Unit] = hc
		m.regions[u.Unit] = hc.Map(fmt.Sprintf("ehci%d", u.Unit))
		m.wg.Add(1)
		go func() { defer m.wg.Done(); hc.Pump(m.stop) }()
	}
	t.Cleanup(func() { close(m.stop); m.wg.Wait() })
	return m
}

func (m *models) SoC() (*ar71xx.SoC, error) { return m.soc, nil }
func (m *models) DMA() busdma.Platform      { return m.sys.Mem }
func (m *models) USBControl() (barrier.Space, error) {
	return m.sys.Bus.Map("usb-ctrl", 8, m.ctrl), nil
}
func (m *models) EHCI(u ar71xx.USBUnit) (barrier.Space, error) {
	r, ok := m.regions[u.Unit]
	if !ok {
		return nil, errors.New("no such EHCI")
	}
	return r, nil
}
func (m *models) USBInterrupt(line int, name string, h func()) error {
	return m.disp.Register(line, name, h)
}

type handler struct {
	mu     sync.Mutex
	frames [][]byte
	links  []gnet.LinkState
}

func (h *handler) Receive(f []byte) {
	h.mu.Lock()
	h.frames = append(h.frames, append([]byte(nil), f...))
	h.mu.Unlock()
}
func (h *handler) LinkChanged(l gnet.LinkState) {
	h.mu.Lock()
	h.links = append(h.links, l)
	h.mu.Unlock()
}
func (h *handler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.frames)
}

type txBuf []byte

func (f txBuf) Segments() [][]byte { return [][]byte{f} }
func (f txBuf) Len() int           { return len(f) }
func (f txBuf) Release()           {}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestStartOnModels runs Start for every board with USB on its SoC's
// models (ar71xxsim, an ehcisim per EHCI from the SoC's USB data) with an
// AX88179 model in each of the board's USB sockets — behind a hub model
// where the board has an on-board hub (TL-WDR4300: two sockets on the
// hub's ports 1 and 2) —: each becomes a LAN port at boot, frames cross
// both ways, the AR71xx's control block gets its swap and FLADJ values,
// and unplugging one socket stops its port (carrier gone) while the other
// (Archer C7: two EHCIs sharing IP3; TL-WDR4300: the hub's other port)
// keeps working.
func TestStartOnModels(t *testing.T) {
	for i, b := range boardfile.All {
		if len(b.USB) == 0 {
			continue
		}
		t.Run(b.Name, func(t *testing.T) { startOnModels(t, b, uint64(40+i)) })
	}
}

func startOnModels(t *testing.T, b *boardfile.Board, seed uint64) {
	m := newModels(t, b, seed)
	start := time.Now()
	var chips []*axgesim.Chip
	var sent []*atomic.Int64
	// unplug[i] pulls chip i out of its socket.
	var unplug []func()
	for _, p := range b.USB {
		var hub *usbsim.Hub
		sockets := 1
		if p.HubPorts > 0 {
			// An on-board hub with a real hub's 256 ms status-change
			// interval.
			hub = usbsim.NewHub(usbsim.HubConfig{Ports: p.HubPorts, Vendor: 0x05e3, Product: 0x0608})
			sockets = p.HubPorts
		}
		for s := 1; s <= sockets; s++ {
			i := len(chips)
			n := &atomic.Int64{}
			c := axgesim.New(axgesim.Config{MAC: [6]byte{0x02, 0xa8, 0x81, 0x79, 0, byte(i)}, Seed: seed,
				Link: axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true},
				Now:  func() time.Duration { return time.Since(start) }, Transmitted: func([]byte) { n.Add(1) }})
			chips, sent = append(chips, c), append(sent, n)
			if hub != nil {
				hub.Plug(s, c.Function())
				unplug = append(unplug, func() { hub.Unplug(s) })
			} else {
				m.hcs[p.Unit].Attach(p.Port, c.Function())
				unplug = append(unplug, func() { m.hcs[p.Unit].Detach(p.Port) })
			}
		}
		if hub != nil {
			m.hcs[p.Unit].Attach(p.Port, hub)
		}
	}
	var detached sync.Map
	u, err := Start(b, m, Config{Debounce: time.Millisecond, Log: t.Logf,
		OnDetach: func(name string) { detached.Store(name, true) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	if len(u.Ports) != len(chips) {
		t.Fatalf("%d ports at boot, want %d: %+v", len(u.Ports), len(chips), u.Ports)
	}
	if m.socM.Info.USB().BringUp == ar71xx.USBBringUp71xx {
		if fladj, cfg := m.ctrl.v[0], m.ctrl.v[1]; fladj != 0x20c00 || cfg != 0xf0000 {
			t.Errorf("USB control block FLADJ %#x CONFIG %#x, want 0x20c00 0xf0000 (Linux ath79_usb_setup)", fladj, cfg)
		}
	}
	hs := make([]*handler, len(u.Ports))
	for i, p := range u.Ports {
		if !strings.HasPrefix(p.Name, "axge") || p.Role.String() != "lan" {
			t.Errorf("port %d: %s %v", i, p.Name, p.Role)
		}
		hs[i] = &handler{}
		if err := p.NIC.Start(hs[i]); err != nil {
			t.Fatal(err)
		}
	}
	// Which chip is which port: the port's MAC is the chip's.
	chipOf := make([]int, len(u.Ports))
	for i, p := range u.Ports {
		mac := p.NIC.MACAddress()
		chipOf[i] = int(mac[5])
	}
	frame := func(n int, tag byte) []byte {
		f := make([]byte, n)
		copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, tag, 0x88, 0xb5})
		return f
	}
	for i, p := range u.Ports {
		c := chips[chipOf[i]]
		for k := 0; k < 20; k++ {
			c.Deliver(frame(60+k*70, byte(i)))
		}
		waitFor(t, p.Name+" RX", func() bool { return hs[i].count() == 20 })
		for k := 0; k < 20; k++ {
			for p.NIC.Transmit(txBuf(frame(60+k*70, byte(i)))) != nil {
				time.Sleep(100 * time.Microsecond)
			}
		}
		waitFor(t, p.Name+" TX", func() bool { return sent[chipOf[i]].Load() == 20 })
	}
	// Unplug the first port's chip: its NIC loses carrier and is
	// detached; any other keeps carrying frames.
	gone := u.Ports[0]
	unplug[chipOf[0]]()
	waitFor(t, gone.Name+" detach", func() bool { _, ok := detached.Load(gone.Name); return ok })
	if gone.NIC.Link().Up {
		t.Errorf("%s still has carrier after unplug", gone.Name)
	}
	hs[0].mu.Lock()
	if n := len(hs[0].links); n == 0 || hs[0].links[n-1].Up {
		t.Errorf("%s: the handler did not hear the carrier go: %+v", gone.Name, hs[0].links)
	}
	hs[0].mu.Unlock()
	for i := 1; i < len(u.Ports); i++ {
		chips[chipOf[i]].Deliver(frame(100, 9))
		waitFor(t, u.Ports[i].Name+" RX after the other's unplug", func() bool { return hs[i].count() == 21 })
	}
	if u.Late() != 0 {
		t.Errorf("%d late attaches", u.Late())
	}
}

// TestStartWithoutUSB: a board without USB ports starts nothing; a port
// on an EHCI the SoC lacks is refused before anything starts.
func TestStartWithoutUSB(t *testing.T) {
	m := newModels(t, boardfile.AP135, 1)
	u, err := Start(boardfile.AP135, m, Config{})
	if err != nil || len(u.Ports) != 0 || len(u.Controllers) != 0 {
		t.Fatalf("AP135: %+v, %v", u, err)
	}
	b := *boardfile.Carambola2
	b.USB = []boardfile.USBPort{{Label: "usb", Unit: 1, Port: 1}}
	m = newModels(t, &b, 2)
	if _, err := Start(&b, m, Config{}); !errors.Is(err, ErrNoEHCI) {
		t.Fatalf("EHCI 1 on an AR9331: %v", err)
	}
}

// TestLateAttach: a function plugged in after boot is attached (and
// heard by OnAttach) but gets no router port; the boot-time list stays.
func TestLateAttach(t *testing.T) {
	b := boardfile.Carambola2
	m := newModels(t, b, 3)
	got := make(chan string, 1)
	u, err := Start(b, m, Config{Debounce: time.Millisecond, Log: t.Logf, OnAttach: func(n string) { got <- n }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	if len(u.Ports) != 0 {
		t.Fatalf("ports at boot with nothing plugged in: %+v", u.Ports)
	}
	start := time.Now()
	c := axgesim.New(axgesim.Config{MAC: [6]byte{0x02, 0xa8, 0x81, 0x79, 0, 7},
		Link: axgesim.Media{Up: true, SpeedMbps: 100, FullDuplex: true},
		Now:  func() time.Duration { return time.Since(start) }})
	m.hcs[b.USB[0].Unit].Attach(b.USB[0].Port, c.Function())
	select {
	case n := <-got:
		if !strings.HasPrefix(n, "axge") {
			t.Errorf("attached %q", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no attach after plugging in")
	}
	if u.Late() != 1 || len(u.Ports) != 0 {
		t.Errorf("late %d, ports %+v", u.Late(), u.Ports)
	}
}
