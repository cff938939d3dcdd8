package axge

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// frameBuf is a one-segment TxBuf.
type frameBuf struct {
	b        []byte
	released *atomic.Int64
}

func (f frameBuf) Segments() [][]byte { return [][]byte{f.b} }
func (f frameBuf) Len() int           { return len(f.b) }
func (f frameBuf) Release()           { f.released.Add(1) }

// collector is a net.Handler that keeps what it hears.
type collector struct {
	mu     sync.Mutex
	frames [][]byte
	links  []gnet.LinkState
}

func (c *collector) Receive(f []byte) {
	c.mu.Lock()
	c.frames = append(c.frames, append([]byte(nil), f...))
	c.mu.Unlock()
}

func (c *collector) LinkChanged(l gnet.LinkState) {
	c.mu.Lock()
	c.links = append(c.links, l)
	c.mu.Unlock()
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func testFrame(n int, seq uint32) []byte {
	f := make([]byte, n)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 2, 0x88, 0xb5})
	binary.BigEndian.PutUint32(f[14:], seq)
	return f
}

// busRig attaches the driver to the model through usbsim.Host and the
// USB core's Bus, as a board does.
type busRig struct {
	host     *usbsim.Host
	bus      *usb.Bus
	model    *axgesim.Chip
	port     *Port
	detached chan *Port
	sent     atomic.Int64
}

func newBusRig(t *testing.T, mc axgesim.Config, dc Config) *busRig {
	t.Helper()
	start := time.Now()
	r := &busRig{detached: make(chan *Port, 1)}
	if mc.MAC == ([6]byte{}) {
		mc.MAC = testMAC
	}
	if mc.Now == nil {
		mc.Now = func() time.Duration { return time.Since(start) }
	}
	mc.Transmitted = func([]byte) { r.sent.Add(1) }
	r.model = axgesim.New(mc)
	r.host = usbsim.NewHost(usbsim.HostConfig{Poll: 100 * time.Microsecond})
	attached := make(chan *Port, 1)
	dc.OnAttach = func(p *Port) { attached <- p }
	dc.OnDetach = func(p *Port) { r.detached <- p }
	if dc.Tick == 0 {
		dc.Tick = 10 * time.Millisecond
	}
	r.bus = usb.NewBus(r.host, usb.BusConfig{Drivers: []usb.Driver{NewDriver(dc)}, Debounce: time.Millisecond})
	r.host.Plug(1, r.model.Function())
	r.bus.Start()
	t.Cleanup(func() {
		r.bus.Stop()
		r.host.Close()
	})
	select {
	case r.port = <-attached:
	case <-time.After(10 * time.Second):
		t.Fatal("driver never attached")
	}
	return r
}

func TestDriverFramesBothWays(t *testing.T) {
	r := newBusRig(t, axgesim.Config{Link: axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true}}, Config{})
	nic := r.port.NIC
	if nic.MACAddress() != gnet.MAC(testMAC) {
		t.Fatalf("MAC %v", nic.MACAddress())
	}
	if l := nic.Link(); !l.Up || l.SpeedMbps != 1000 {
		t.Fatalf("link %+v", l)
	}
	h := &collector{}
	if err := nic.Start(h); err != nil {
		t.Fatal(err)
	}
	// RX: frames of every size class, aggregated by the model's timer.
	const rxN = 200
	sizes := []int{60, 64, 503, 504, 505, 1000, 1514}
	for i := 0; i < rxN; i++ {
		r.model.Deliver(testFrame(sizes[i%len(sizes)], uint32(i)))
		if i%17 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(t, "RX frames", func() bool { return h.count() == rxN })
	h.mu.Lock()
	for i, f := range h.frames {
		if len(f) != sizes[i%len(sizes)] || binary.BigEndian.Uint32(f[14:]) != uint32(i) {
			t.Fatalf("frame %d: %d bytes, seq %d", i, len(f), binary.BigEndian.Uint32(f[14:]))
		}
	}
	h.mu.Unlock()
	// TX: including the sizes whose frame + header fill whole 512-byte
	// packets (504 and 1016: half the frames).
	var released atomic.Int64
	txSizes := []int{60, 504, 1016, 1514, 1000, 504}
	sent := 0
	for i := 0; i < 120; i++ {
		n := txSizes[i%len(txSizes)]
		for {
			err := nic.Transmit(frameBuf{testFrame(n, uint32(i)), &released})
			if err == nil {
				sent++
				break
			}
			if !errors.Is(err, gnet.ErrTxFull) {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	waitFor(t, "TX frames at the chip", func() bool { return r.sent.Load() == int64(sent) })
	st := r.model.Stats()
	if st.TxWedges != 0 || st.TxBadHeaders != 0 || st.TxPadded != 60 {
		t.Fatalf("model: %d wedges, %d bad headers, %d padded (want 60)", st.TxWedges, st.TxBadHeaders, st.TxPadded)
	}
	waitFor(t, "TX buffers released", func() bool { return released.Load() == int64(sent) })
	// The MII tick follows the PHY.
	r.model.SetLink(axgesim.Media{Up: true, SpeedMbps: 100, FullDuplex: true})
	waitFor(t, "link at 100", func() bool { return nic.Link().SpeedMbps == 100 })
	if r.model.QCtrl() != BulkIn100 {
		t.Fatalf("QCTRL %x at 100", r.model.QCtrl())
	}
	// Unplug: the port is detached and its NIC stopped.
	r.host.Unplug(1)
	select {
	case p := <-r.detached:
		if p != r.port || !p.NIC.Gone() {
			t.Fatal("detached the wrong port, or its NIC is not gone")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no detach after unplug")
	}
	if err := nic.Transmit(frameBuf{testFrame(60, 0), &released}); err == nil {
		t.Fatal("Transmit after unplug accepted")
	}
}
