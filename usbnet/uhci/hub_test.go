package uhci_test

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/cdcecm"
	"github.com/gowrt/gowrt/usbnet/cdcecm/ecmsim"
	"github.com/gowrt/gowrt/usbnet/uhci"
	"github.com/gowrt/gowrt/usbnet/uhci/uhcisim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

type hubHandler struct {
	mu     sync.Mutex
	frames [][]byte
}

func (h *hubHandler) Receive(f []byte) {
	h.mu.Lock()
	h.frames = append(h.frames, append([]byte(nil), f...))
	h.mu.Unlock()
}
func (h *hubHandler) LinkChanged(gnet.LinkState) {}
func (h *hubHandler) n() int                     { h.mu.Lock(); defer h.mu.Unlock(); return len(h.frames) }

type hubTxBuf []byte

func (f hubTxBuf) Segments() [][]byte { return [][]byte{f} }
func (f hubTxBuf) Len() int           { return len(f) }
func (f hubTxBuf) Release()           {}

func hubFrame(n int, tag byte) []byte {
	f := make([]byte, n)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, tag, 0x88, 0xb5})
	for i := 14; i < n; i++ {
		f[i] = byte(i) ^ tag
	}
	return f
}

// TestECMBehindHubOverUHCIModel: a full-speed hub model (usbsim.Hub) on
// the UHCI model's root port, hosted unchanged like any function, with
// the CDC-ECM function on its port 3: the core's hub driver enumerates
// it, cdcecm attaches, frames cross both ways, and pulling the hub out
// tears the function down first, then the hub.
func TestECMBehindHubOverUHCIModel(t *testing.T) {
	const line = 11
	sys := hwsim.New(hwsim.Config{Seed: 23, BigEndianCPU: true, NoEviction: true})
	ctl := sys.NewController(hwsim.ControllerConfig{Name: "i8259", Lines: 16})
	model := uhcisim.New(sys, ctl, uhcisim.Config{Line: line})
	hc, err := uhci.New(uhci.Config{Name: "uhci0", Regs: model.Map("uhci"), DMA: sys.Mem, PortPoll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	disp := intr.NewDispatcher(ctl, ctl)
	if err := ctl.SetTrigger(line, intr.Level); err != nil {
		t.Fatal(err)
	}
	if err := disp.Register(line, "uhci", hc.Interrupt); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	pumped := make(chan struct{})
	go func() { defer close(pumped); model.Pump(stop) }()
	if err := hc.Start(); err != nil {
		t.Fatal(err)
	}
	attached := make(chan *cdcecm.Port, 1)
	detached := make(chan *cdcecm.Port, 1)
	drv := &cdcecm.Driver{OnAttach: func(p *cdcecm.Port) { attached <- p }, OnDetach: func(p *cdcecm.Port) { detached <- p }}
	bus := usb.NewBus(hc, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: 5 * time.Millisecond,
		Log: func(s string) { t.Log(s) }})
	bus.Start()
	defer func() {
		bus.Stop()
		hc.Stop()
		_ = disp.Unregister(line)
		close(stop)
		<-pumped
		for _, m := range sys.Misuses() {
			t.Errorf("misuse: %v", m)
		}
	}()
	fn := ecmsim.New([6]byte{0x02, 0xec, 0, 0, 0, 1})
	hub := usbsim.NewHub(usbsim.HubConfig{Ports: 4, Speed: usb.SpeedFull, Interval: 8})
	hub.Plug(3, fn.Device)
	model.Plug(1, hub)
	var port *cdcecm.Port
	select {
	case port = <-attached:
	case <-time.After(20 * time.Second):
		t.Fatalf("no attach; bus %+v", bus.Stats())
	}
	if d := port.Device; d.At.String() != "uhci0 port 1.3" || d.Depth != 1 || d.Speed != usb.SpeedFull || d.TTAddress != 0 {
		t.Fatalf("function at %v depth %d speed %v TT %d", d.At, d.Depth, d.Speed, d.TTAddress)
	}
	h := &hubHandler{}
	if err := port.Start(h); err != nil {
		t.Fatal(err)
	}
	sizes := []int{60, 64, 65, 500, 1514}
	for i, n := range sizes {
		fn.Send(hubFrame(n, byte(i)))
	}
	for deadline := time.Now().Add(10 * time.Second); h.n() != len(sizes); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d frames to the host", h.n(), len(sizes))
		}
	}
	for i, n := range sizes {
		if !bytes.Equal(h.frames[i], hubFrame(n, byte(i))) {
			t.Fatalf("frame %d differs", i)
		}
	}
	// Transmit needs carrier, which the function's NETWORK_CONNECTION
	// notification brings, on its own interrupt endpoint: it may trail
	// the first received frames.
	for deadline := time.Now().Add(10 * time.Second); !port.NIC.Link().Up; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no carrier after 10 s")
		}
	}
	for i, n := range sizes {
		f := hubFrame(n, byte(50+i))
		for {
			err := port.Transmit(hubTxBuf(f))
			if err == nil {
				break
			}
			if !errors.Is(err, gnet.ErrTxFull) {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case got := <-fn.Frames():
			if !bytes.Equal(got, f) {
				t.Fatalf("wire frame %d differs", i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("wire frame %d missing", i)
		}
	}
	model.Unplug(1)
	select {
	case p := <-detached:
		if p != port || !p.Device.Gone() || !p.NIC.Gone() {
			t.Fatal("wrong port detached, or not gone")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no detach after the hub's unplug")
	}
	for deadline := time.Now().Add(10 * time.Second); len(bus.Devices()) != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("left: %v", bus.Devices())
		}
	}
}
