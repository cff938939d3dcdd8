package ehci

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/axge"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// TestAX88179BehindHubOverEHCIModel is the TL-WDR4300's USB: a
// high-speed hub (usbsim.Hub) on
// the EHCI model's root port, the AX88179 on the hub's port 2. The core's
// hub driver enumerates the chip behind the hub, axge attaches, frames
// cross both ways intact; pulling the chip out of the hub detaches its
// port while the hub stays, and pulling the hub out detaches the hub.
func TestAX88179BehindHubOverEHCIModel(t *testing.T) {
	t.Run("ar934x-be-tt", func(t *testing.T) { ax88179BehindHub(t, rigOpts{seed: 31, tt: true, noDevice: true}) })
	t.Run("pci-le", func(t *testing.T) { ax88179BehindHub(t, rigOpts{seed: 32, le: true, noDevice: true}) })
}

func ax88179BehindHub(t *testing.T, o rigOpts) {
	r := newRig(t, o)
	start := time.Now()
	var sent atomic.Int64
	chip := axgesim.New(axgesim.Config{MAC: [6]byte{0x02, 0xa8, 0x81, 0x79, 0, 2},
		Link:        axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true},
		Now:         func() time.Duration { return time.Since(start) },
		Transmitted: func([]byte) { sent.Add(1) }})
	// bInterval 4: the status-change endpoint polled every millisecond
	// (board/ar71xx/usbport's test keeps a real hub's 256 ms).
	hub := usbsim.NewHub(usbsim.HubConfig{Ports: 2, Vendor: 0x05e3, Product: 0x0608, Interval: 4})
	hub.Plug(2, chip.Function())
	attached := make(chan *axge.Port, 1)
	detached := make(chan *axge.Port, 1)
	drv := axge.NewDriver(axge.Config{OnAttach: func(p *axge.Port) { attached <- p },
		OnDetach: func(p *axge.Port) { detached <- p }, Tick: 10 * time.Millisecond})
	bus := usb.NewBus(r.hc, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: time.Millisecond,
		Log: func(s string) { t.Log(time.Since(start).Round(time.Millisecond), s) }})
	bus.Start()
	defer bus.Stop()
	r.sim.Attach(1, hub)
	var port *axge.Port
	select {
	case port = <-attached:
	case <-time.After(20 * time.Second):
		t.Fatalf("no attach; bus %+v", bus.Stats())
	}
	if d := bus.Hubs()[0].Child(2); d == nil || d.Depth != 1 || d.Speed != usb.SpeedHigh || d.TTAddress != 0 {
		t.Fatalf("chip behind the hub: %v", d)
	}
	nic := port.NIC
	h := &stackHandler{}
	if err := nic.Start(h); err != nil {
		t.Fatal(err)
	}
	const rxN = 200
	sizes := []int{60, 64, 503, 504, 505, 1000, 1514}
	// In bursts of 20 the chip's RX FIFO holds, each taken before the
	// next (a slow emulated CPU must not turn this into a FIFO test).
	for i := 0; i < rxN; i++ {
		chip.Deliver(stackFrame(sizes[i%len(sizes)], uint32(i)))
		if i%20 == 19 {
			waitUntil(t, "RX frames", func() bool { return h.count() == i+1 })
		}
	}
	waitUntil(t, "RX frames", func() bool { return h.count() == rxN })
	if d := chip.Stats().RxFIFODrops; d != 0 {
		t.Fatalf("%d frames dropped at the chip", d)
	}
	h.mu.Lock()
	for i, f := range h.frames {
		if len(f) != sizes[i%len(sizes)] || binary.BigEndian.Uint32(f[14:]) != uint32(i) {
			t.Fatalf("frame %d: %d bytes, seq %d", i, len(f), binary.BigEndian.Uint32(f[14:]))
		}
	}
	h.mu.Unlock()
	var released atomic.Int64
	txSizes := []int{60, 504, 1016, 1514, 1000, 504}
	n := 0
	for i := 0; i < 120; i++ {
		for {
			err := nic.Transmit(stackBuf{stackFrame(txSizes[i%len(txSizes)], uint32(i)), &released})
			if err == nil {
				n++
				break
			}
			if !errors.Is(err, gnet.ErrTxFull) {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	waitUntil(t, "TX frames at the chip", func() bool { return sent.Load() == int64(n) })
	if st := chip.Stats(); st.TxWedges != 0 || st.TxBadHeaders != 0 || st.TxPadded != 60 {
		t.Fatalf("model: %d wedges, %d bad headers, %d padded (want 60)", st.TxWedges, st.TxBadHeaders, st.TxPadded)
	}

	// The chip pulled out of the hub: the status-change endpoint tells.
	// (Its transfers fail with transaction errors, not ErrGone, as on the
	// hardware; the NIC learns the device is gone from the core, through
	// Hooks.Gone, and stopped without carrier.)
	hub.Unplug(2)
	select {
	case p := <-detached:
		if p != port || !p.Device.Gone() || !p.NIC.Gone() || p.NIC.Link().Up {
			t.Fatal("detached the wrong port, or it is not gone, or it kept its carrier")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no detach after unplug from the hub")
	}
	if len(bus.Hubs()) != 1 {
		t.Fatal("hub gone with its child")
	}
	// Back in, then the whole hub pulled out of the root port.
	hub.Plug(2, chip.Function())
	select {
	case port = <-attached:
	case <-time.After(20 * time.Second):
		t.Fatalf("no attach after replug; bus %+v", bus.Stats())
	}
	r.sim.Detach(1)
	select {
	case p := <-detached:
		if p != port {
			t.Fatal("detached the wrong port")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no detach after the hub's unplug")
	}
	waitUntil(t, "hub detached", func() bool { return len(bus.Hubs()) == 0 && len(bus.Devices()) == 0 })
	r.noMisuse(t)
}
