package usb_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// busLog collects a Bus's log lines.
type busLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *busLog) add(s string) { l.mu.Lock(); l.lines = append(l.lines, s); l.mu.Unlock() }
func (l *busLog) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
func (l *busLog) index(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, s := range l.lines {
		if strings.Contains(s, sub) {
			return i
		}
	}
	return -1
}

// hubRig is a usbsim Host with a hub model on root port 1 and a Bus
// with the test driver.
type hubRig struct {
	host *usbsim.Host
	hub  *usbsim.Hub
	bus  *usb.Bus
	drv  *testDriver
	log  *busLog
}

func newHubRig(t *testing.T, cfg usbsim.HubConfig, plugHub bool) *hubRig {
	t.Helper()
	r := &hubRig{host: usbsim.NewHost(usbsim.HostConfig{Ports: 2}), log: &busLog{}}
	t.Cleanup(r.host.Close)
	if cfg.Interval == 0 {
		cfg.Interval = 4 // 1 ms at high speed: tests need not wait 256 ms
	}
	r.hub = usbsim.NewHub(cfg)
	r.drv = &testDriver{r: &recorder{}}
	r.bus = usb.NewBus(r.host, usb.BusConfig{Drivers: []usb.Driver{r.drv}, Debounce: time.Millisecond,
		HubPoll: 5 * time.Millisecond, Log: func(s string) { r.log.add(s); t.Log(s) }})
	if plugHub {
		r.host.Plug(1, r.hub)
	}
	r.bus.Start()
	t.Cleanup(r.bus.Stop)
	return r
}

func (r *hubRig) device(path string) *usb.Device {
	for _, d := range r.bus.Devices() {
		if d.At.String() == path {
			return d
		}
	}
	return nil
}

func highSpeedDevice(vendor uint16) *usbsim.Device {
	return usbsim.NewDevice(usbsim.Config{Speed: usb.SpeedHigh,
		Device:  usbsim.DeviceDesc{Vendor: vendor, Product: 2, MaxPacket0: 64},
		Configs: []usbsim.ConfigDesc{{Value: 1}}})
}

// TestHubEnumeratesBehind: a full-speed device on port 2 and a high-speed
// one on port 3 of a high-speed hub come up through the core; the
// full-speed one's pipes name the hub's TT (address, port 2), the
// high-speed one's none; the driver's bulk-in transfers run through the
// hub; Idle reports the bus settled.
func TestHubEnumeratesBehind(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 4}, false)
	r.hub.Plug(2, newSimDevice(&source{endless: true}))
	r.hub.Plug(3, highSpeedDevice(7))
	r.host.Plug(1, r.hub)
	waitFor(t, func() bool { return r.bus.Stats().Attached == 2 && r.bus.Stats().Unbound == 1 })
	waitFor(t, r.bus.Idle)
	hubs := r.bus.Hubs()
	if len(hubs) != 1 {
		t.Fatalf("%d hubs", len(hubs))
	}
	hd := hubs[0].Dev
	if hubs[0].Desc.Ports != 4 || hd.Depth != 0 || hd.Parent != nil || hd.Speed != usb.SpeedHigh {
		t.Fatalf("hub %v: %+v depth %d", hd, hubs[0].Desc, hd.Depth)
	}
	fs := r.device("usbsim0 port 1.2")
	hs := r.device("usbsim0 port 1.3")
	if fs == nil || hs == nil {
		t.Fatalf("devices %v", r.bus.Devices())
	}
	if fs.Parent != hd || fs.Depth != 1 || fs.Port != 2 || fs.Speed != usb.SpeedFull || fs.Product != "AX88179" {
		t.Fatalf("full-speed child %v: parent %v depth %d speed %v", fs, fs.Parent, fs.Depth, fs.Speed)
	}
	if fs.TTAddress != hd.Address || fs.TTPort != 2 {
		t.Fatalf("full-speed child TT %d/%d, want hub %d port 2", fs.TTAddress, fs.TTPort, hd.Address)
	}
	if c := r.drv.in.Config(); c.HubAddress != hd.Address || c.HubPort != 2 || c.Address != fs.Address {
		t.Fatalf("bulk-in pipe config %+v", c)
	}
	if hs.Speed != usb.SpeedHigh || hs.TTAddress != 0 || hs.TTPort != 0 {
		t.Fatalf("high-speed child %v: speed %v TT %d/%d", hs, hs.Speed, hs.TTAddress, hs.TTPort)
	}
	if hubs[0].Child(2) != fs || hubs[0].Child(3) != hs || hubs[0].Child(1) != nil {
		t.Fatal("hub children wrong")
	}
	waitFor(t, func() bool { return r.drv.inDone.Load() > 20 })
	if st := hubs[0].Stats(); st.PollingFallback || st.Enumerated != 2 {
		t.Fatalf("hub stats %+v", st)
	}
	if r.hub.Resets() != 2 {
		t.Fatalf("hub drove %d resets, want 2", r.hub.Resets())
	}
}

// TestHubUnplugChild: a device pulled from a hub port is torn down (its
// driver hears it, the port is disabled) and the hub keeps working: the
// same port takes a new device.
func TestHubUnplugChild(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 2}, true)
	r.hub.Plug(1, newSimDevice(&source{endless: true}))
	waitFor(t, func() bool { return r.bus.Stats().Attached == 2 })
	child := r.device("usbsim0 port 1.1")
	waitFor(t, func() bool { return r.drv.inDone.Load() > 5 })
	r.hub.Unplug(1)
	waitFor(t, func() bool { return r.bus.Stats().Detached == 1 })
	if !child.Gone() || r.bus.Hubs()[0].Child(1) != nil {
		t.Fatal("child not torn down")
	}
	if got := r.drv.r.list(); len(got) != 1 || got[0] != "driver detach (gone=true)" {
		t.Fatalf("driver events %q", got)
	}
	if r.hub.PortEnabled(1) {
		t.Fatal("hub port still enabled")
	}
	waitFor(t, func() bool { return r.bus.Hubs()[0].Stats().Detached == 1 })
	if st := r.bus.Hubs()[0].Stats(); st.StatusChanges == 0 {
		t.Fatalf("hub stats %+v", st)
	}
	r.hub.Plug(1, highSpeedDevice(9))
	waitFor(t, func() bool { return r.bus.Stats().Unbound == 1 })
	if d := r.device("usbsim0 port 1.1"); d == nil || d.Desc.Vendor != 9 || d.Address == child.Address {
		t.Fatalf("new child %v (old address %d)", d, child.Address)
	}
}

// TestHubUnplugHub: pulling the hub out tears down everything behind it,
// children (and a hub behind it, and its child) completely before the
// hub itself.
func TestHubUnplugHub(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 4}, true)
	inner := usbsim.NewHub(usbsim.HubConfig{Ports: 2, Interval: 4})
	inner.Plug(2, highSpeedDevice(5))
	r.hub.Plug(1, newSimDevice(&source{endless: true}))
	r.hub.Plug(3, inner)
	waitFor(t, func() bool { s := r.bus.Stats(); return s.Attached == 3 && s.Unbound == 1 })
	deep := r.device("usbsim0 port 1.3.2")
	if deep == nil || deep.Depth != 2 || deep.Parent == nil || deep.Parent.At.String() != "usbsim0 port 1.3" {
		t.Fatalf("device behind the inner hub: %v", r.bus.Devices())
	}
	detachLine := func(sub string) int {
		r.log.mu.Lock()
		defer r.log.mu.Unlock()
		for i, s := range r.log.lines {
			if strings.Contains(s, sub) && strings.HasSuffix(s, "detached") {
				return i
			}
		}
		return -1
	}
	r.host.Unplug(1)
	waitFor(t, func() bool { return r.bus.Stats().Detached == 4 && detachLine("port 1 addr") >= 0 })
	if len(r.bus.Devices()) != 0 || len(r.bus.Hubs()) != 0 {
		t.Fatalf("left: %v", r.bus.Devices())
	}
	d3, d31, d1, d11 := detachLine("port 1.3.2 addr"), detachLine("port 1.3 addr"), detachLine("port 1 addr"), detachLine("port 1.1 addr")
	if !(d3 < d31 && d31 < d1 && d11 < d1 && d3 >= 0 && d11 >= 0) {
		t.Fatalf("teardown order: 1.3.2 at %d, 1.3 at %d, 1.1 at %d, hub at %d", d3, d31, d11, d1)
	}
	if got := r.drv.r.list(); len(got) != 1 || got[0] != "driver detach (gone=true)" {
		t.Fatalf("driver events %q", got)
	}
}

// TestHubHostileAnswers: a hub descriptor that is short, of the wrong
// type or claims more ports than its bitmaps cover, a hub with 16 ports,
// a port that never finishes reset and a port whose status request stalls
// give clear errors and no panic; the healthy parts keep working.
func TestHubHostileAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		desc       []byte
	}{
		{"short", "hub descriptor of 2 bytes", []byte{9, 0x29}},
		{"wrong type", "hub descriptor type 0x2a", []byte{9, 0x2a, 2, 0, 0, 1, 0, 0, 0xff}},
		{"bitmaps short", "for 8 ports, need 11", []byte{9, 0x29, 8, 0, 0, 1, 0, 0, 0xff}},
		{"no ports", "hub with no ports", []byte{9, 0x29, 0, 0, 0, 1, 0, 0, 0xff}},
		{"16 ports", "16 ports, at most 15", []byte{13, 0x29, 16, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newHubRig(t, usbsim.HubConfig{Ports: 2}, false)
			r.hub.SetDescriptor(tc.desc)
			r.host.Plug(1, r.hub)
			waitFor(t, func() bool { return r.bus.Stats().AttachFailed == 1 })
			waitFor(t, func() bool { return r.log.has(tc.want) && r.log.has("hub: attach: hub: hub descriptor") })
			if len(r.bus.Hubs()) != 0 {
				t.Fatal("hub attached anyway")
			}
		})
	}
	t.Run("reset never ends", func(t *testing.T) {
		r := newHubRig(t, usbsim.HubConfig{Ports: 2}, true)
		waitFor(t, func() bool { return r.bus.Stats().Hubs == 1 && r.bus.Idle() })
		r.hub.StickReset(1, true)
		r.hub.Plug(1, highSpeedDevice(3))
		r.hub.Plug(2, highSpeedDevice(4))
		waitFor(t, func() bool { s := r.bus.Stats(); return s.EnumerationFailed == 1 && s.Unbound == 1 })
		waitFor(t, func() bool {
			return r.log.has("usbsim0 port 1.1: reset: usb: hub port reset did not complete after 800ms")
		})
		if st := r.bus.Hubs()[0].Stats(); st.ResetFailures != 1 {
			t.Fatalf("hub stats %+v", st)
		}
		// Replugged into a port that works again: it comes up.
		r.hub.StickReset(1, false)
		r.hub.Unplug(1)
		r.hub.Plug(1, highSpeedDevice(3))
		waitFor(t, func() bool { return r.bus.Stats().Unbound == 2 })
	})
	t.Run("status stalls", func(t *testing.T) {
		r := newHubRig(t, usbsim.HubConfig{Ports: 2}, true)
		waitFor(t, func() bool { return r.bus.Stats().Hubs == 1 && r.bus.Idle() })
		r.hub.StallStatus(true)
		r.hub.Plug(2, highSpeedDevice(3))
		h := r.bus.Hubs()[0]
		waitFor(t, func() bool { return h.Stats().StatusErrors >= 2 })
		waitFor(t, func() bool {
			return r.log.has("port 2 status: setup{type 0xa3 req 0x00 value 0x0000 index 0x0002 len 4}: usb: endpoint stalled")
		})
		if r.bus.Stats().Enumerated != 1 {
			t.Fatalf("stats %+v", r.bus.Stats())
		}
		// The change is still pending at the hub: once status works,
		// the device comes up.
		r.hub.StallStatus(false)
		waitFor(t, func() bool { return r.bus.Stats().Unbound == 1 })
	})
	t.Run("status endpoint halted", func(t *testing.T) {
		r := newHubRig(t, usbsim.HubConfig{Ports: 2}, true)
		waitFor(t, func() bool { return r.bus.Stats().Hubs == 1 && r.bus.Idle() })
		r.hub.Device().Halt(0x81)
		h := r.bus.Hubs()[0]
		waitFor(t, func() bool { return h.Stats().IntrErrors >= 1 })
		r.hub.Plug(1, highSpeedDevice(3))
		waitFor(t, func() bool { return r.bus.Stats().Unbound == 1 })
		if r.hub.Device().Halted(0x81) {
			t.Fatal("halt not cleared")
		}
	})
	t.Run("vanishes mid-enumeration", func(t *testing.T) {
		r := newHubRig(t, usbsim.HubConfig{Ports: 2}, true)
		waitFor(t, func() bool { return r.bus.Stats().Hubs == 1 && r.bus.Idle() })
		d := highSpeedDevice(3)
		d.FailControl(1000, usbsim.NoResponse)
		r.hub.Plug(1, d)
		waitFor(t, func() bool { return r.log.has("usbsim0 port 1.1: device descriptor (8 bytes)") })
		if r.hub.PortEnabled(1) {
			t.Fatal("port of a failed device left enabled")
		}
	})
}

// TestHubPollingFallback: a hub without a status-change endpoint has its
// ports polled.
func TestHubPollingFallback(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 3, NoStatusEndpoint: true}, true)
	waitFor(t, func() bool { return r.bus.Stats().Hubs == 1 && r.bus.Idle() })
	r.hub.Plug(3, highSpeedDevice(3))
	waitFor(t, func() bool { return r.bus.Stats().Unbound == 1 })
	st := r.bus.Hubs()[0].Stats()
	if !st.PollingFallback || st.Polls == 0 || st.StatusChanges != 0 {
		t.Fatalf("stats %+v", st)
	}
	r.hub.Unplug(3)
	waitFor(t, func() bool { return r.bus.Stats().Detached == 1 })
}

// TestHubDepth: five hubs in a chain work and a device behind the fifth
// comes up; a sixth hub is refused (USB 2.0 §4.1.1).
func TestHubDepth(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 2}, false)
	chain := []*usbsim.Hub{r.hub}
	for range 5 {
		h := usbsim.NewHub(usbsim.HubConfig{Ports: 2, Interval: 4})
		chain[len(chain)-1].Plug(1, h)
		chain = append(chain, h)
	}
	chain[4].Plug(2, highSpeedDevice(3))
	r.host.Plug(1, r.hub)
	waitFor(t, func() bool { s := r.bus.Stats(); return s.Hubs == 5 && s.AttachFailed == 1 && s.Unbound == 2 })
	waitFor(t, func() bool {
		return r.log.has("usbsim0 port 1.1.1.1.1.1 addr") && r.log.has("hub behind 5 hubs: USB allows 5 in a chain")
	})
	d := r.device("usbsim0 port 1.1.1.1.1.2")
	if d == nil || d.Depth != 5 {
		t.Fatalf("device behind the fifth hub: %v", r.bus.Devices())
	}
}

// TestHubTTInheritance: a full-speed hub behind a high-speed hub is
// reached through the high-speed hub's TT, and so is everything behind
// it; a full-speed hub on a root port gives no TT.
func TestHubTTInheritance(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 2}, false)
	fsHub := usbsim.NewHub(usbsim.HubConfig{Ports: 2, Speed: usb.SpeedFull, Interval: 1})
	fsHub.Plug(2, newSimDevice(&source{endless: true}))
	r.hub.Plug(2, fsHub)
	r.host.Plug(1, r.hub)
	waitFor(t, func() bool { return r.bus.Stats().Attached == 3 })
	hs := r.device("usbsim0 port 1")
	fh := r.device("usbsim0 port 1.2")
	leaf := r.device("usbsim0 port 1.2.2")
	if fh.TTAddress != hs.Address || fh.TTPort != 2 || leaf.TTAddress != hs.Address || leaf.TTPort != 2 {
		t.Fatalf("TTs: hub %d/%d leaf %d/%d, want %d/2", fh.TTAddress, fh.TTPort, leaf.TTAddress, leaf.TTPort, hs.Address)
	}
	waitFor(t, func() bool { return r.drv.inDone.Load() > 5 })

	r2 := newHubRig(t, usbsim.HubConfig{Ports: 2, Speed: usb.SpeedFull, Interval: 1}, false)
	r2.hub.Plug(1, highSpeedDevice(3))
	r2.host.Plug(1, r2.hub)
	waitFor(t, func() bool { return r2.bus.Stats().Unbound == 1 })
	d := r2.device("usbsim0 port 1.1")
	if d.Speed != usb.SpeedFull || d.TTAddress != 0 {
		t.Fatalf("behind a full-speed root hub: %v speed %v TT %d", d, d.Speed, d.TTAddress)
	}
}

func TestParseHubDescriptor(t *testing.T) {
	// A 4-port high-speed hub: per-port power switching, per-port
	// over-current, TT think time 16 bit times, indicators; 100 ms to
	// power good; port 4 built in.
	h, err := usb.ParseHubDescriptor([]byte{9, 0x29, 4, 0xa9, 0, 50, 100, 0x10, 0xff})
	if err != nil {
		t.Fatal(err)
	}
	if h.Ports != 4 || h.PowerOnToGood != 100*time.Millisecond || h.ControllerCurrent != 100 ||
		h.NonRemovable != 0x10 || h.TTThinkTime() != 16 || h.Compound() {
		t.Fatalf("%+v think %d", h, h.TTThinkTime())
	}
	// 15 ports: two bytes per bitmap.
	h, err = usb.ParseHubDescriptor([]byte{11, 0x29, 15, 0x04, 0, 1, 0, 0x02, 0x80, 0xff, 0xff})
	if err != nil || h.Ports != 15 || h.NonRemovable != 0x8002 || !h.Compound() {
		t.Fatalf("%+v %v", h, err)
	}
	for _, b := range [][]byte{nil, {9}, {9, 0x29}, {8, 0x29, 4, 0, 0, 1, 0, 0}, {9, 0x29, 7, 0, 0, 1, 0, 0}} {
		if _, err := usb.ParseHubDescriptor(b); !errors.Is(err, usb.ErrDescriptor) {
			t.Errorf("% x: %v", b, err)
		}
	}
	if _, err := usb.ParseHubDescriptor(append([]byte{13, 0x29, 20, 0, 0, 1, 0}, make([]byte, 6)...)); !errors.Is(err, usb.ErrTooManyPorts) {
		t.Errorf("20 ports: %v", err)
	}
}

func FuzzParseHubDescriptor(f *testing.F) {
	f.Add([]byte{9, 0x29, 4, 0xa9, 0, 50, 100, 0x10, 0xff})
	f.Add([]byte{11, 0x29, 15, 0x04, 0, 1, 0, 0x02, 0x80, 0xff, 0xff})
	f.Add([]byte{71, 0x29, 255, 0, 0, 1, 0})
	f.Add([]byte{9, 0x29, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := usb.ParseHubDescriptor(b)
		if err != nil {
			return
		}
		if h.Ports < 1 || h.Ports > usb.MaxHubPorts || int(b[0]) > len(b) && int(b[0]) < 7+2*((h.Ports+8)/8) {
			t.Fatalf("% x parsed as %+v", b, h)
		}
		if h.NonRemovable&1 != 0 || h.NonRemovable>>(h.Ports+1) != 0 {
			t.Fatalf("% x: removable bitmap %#x for %d ports", b, h.NonRemovable, h.Ports)
		}
		if th := h.TTThinkTime(); th < 8 || th > 32 {
			t.Fatal(th)
		}
	})
}

// TestHubStopWhileRequestHangs: a hub whose port status request hangs
// (its control requests NAK for ten seconds) is torn down at once when
// the bus stops: the request in progress is cancelled, not waited out.
func TestHubStopWhileRequestHangs(t *testing.T) {
	r := newHubRig(t, usbsim.HubConfig{Ports: 2}, true)
	waitFor(t, func() bool { return r.bus.Stats().Hubs == 1 && r.bus.Idle() })
	r.hub.Device().SlowControl(0, 10*time.Second)
	r.hub.Plug(1, highSpeedDevice(3))
	waitFor(t, func() bool { return !r.bus.Idle() }) // the hub is reading the port
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	r.bus.Stop()
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("Stop took %v", d)
	}
	if s := r.bus.Stats(); s.Detached != 1 || len(r.bus.Hubs()) != 0 {
		t.Fatalf("stats %+v", s)
	}
}
