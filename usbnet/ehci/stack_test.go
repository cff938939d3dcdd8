package ehci

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/axge"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// stackHandler is a net.Handler that keeps the frames it hears.
type stackHandler struct {
	mu     sync.Mutex
	frames [][]byte
}

func (h *stackHandler) Receive(f []byte) {
	h.mu.Lock()
	h.frames = append(h.frames, append([]byte(nil), f...))
	h.mu.Unlock()
}
func (h *stackHandler) LinkChanged(gnet.LinkState) {}
func (h *stackHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.frames)
}

type stackBuf struct {
	b        []byte
	released *atomic.Int64
}

func (f stackBuf) Segments() [][]byte { return [][]byte{f.b} }
func (f stackBuf) Len() int           { return len(f.b) }
func (f stackBuf) Release()           { f.released.Add(1) }

func stackFrame(n int, seq uint32) []byte {
	f := make([]byte, n)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 2, 0x88, 0xb5})
	binary.BigEndian.PutUint32(f[14:], seq)
	return f
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAX88179OverEHCIModel runs the stack of an AR934x router with a USB
// gigabit adapter, on models: the AX88179 (axgesim, high speed) on the
// root port of a ChipIdea EHCI with its integrated TT (ehcisim, big-endian
// registers, late write-backs, seeded interleavings) and of a plain
// little-endian EHCI on a little-endian CPU, this driver, the USB
// core's Bus and the axge driver with its usbnet NIC. Frames of every size
// class cross both ways intact, the TX padding case included, and
// unplugging detaches the port.
func TestAX88179OverEHCIModel(t *testing.T) {
	t.Run("ar934x-be-tt", func(t *testing.T) { ax88179Stack(t, rigOpts{seed: 21, tt: true, noDevice: true}) })
	t.Run("pci-le", func(t *testing.T) { ax88179Stack(t, rigOpts{seed: 22, le: true, noDevice: true}) })
}

func ax88179Stack(t *testing.T, o rigOpts) {
	r := newRig(t, o)
	start := time.Now()
	var sent atomic.Int64
	chip := axgesim.New(axgesim.Config{MAC: [6]byte{0x02, 0xa8, 0x81, 0x79, 0, 1},
		Link:        axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true},
		Now:         func() time.Duration { return time.Since(start) },
		Transmitted: func([]byte) { sent.Add(1) }})
	attached := make(chan *axge.Port, 1)
	detached := make(chan *axge.Port, 1)
	drv := axge.NewDriver(axge.Config{OnAttach: func(p *axge.Port) { attached <- p },
		OnDetach: func(p *axge.Port) { detached <- p }, Tick: 10 * time.Millisecond})
	bus := usb.NewBus(r.hc, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: time.Millisecond,
		Log: func(s string) { t.Log(s) }})
	bus.Start()
	defer bus.Stop()
	r.sim.Attach(1, chip.Function())
	var port *axge.Port
	select {
	case port = <-attached:
	case <-time.After(20 * time.Second):
		t.Fatalf("no attach; bus %+v", bus.Stats())
	}
	nic := port.NIC
	h := &stackHandler{}
	if err := nic.Start(h); err != nil {
		t.Fatal(err)
	}
	const rxN = 300
	sizes := []int{60, 64, 503, 504, 505, 1000, 1514}
	t0 := time.Now()
	for i := 0; i < rxN; i++ {
		chip.Deliver(stackFrame(sizes[i%len(sizes)], uint32(i)))
		if i%17 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	waitUntil(t, "RX frames", func() bool { return h.count() == rxN })
	rxTime := time.Since(t0)
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
	t0 = time.Now()
	for i := 0; i < 300; i++ {
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
	txTime := time.Since(t0)
	if st := chip.Stats(); st.TxWedges != 0 || st.TxBadHeaders != 0 || st.TxPadded != 150 {
		t.Fatalf("model: %d wedges, %d bad headers, %d padded (want 150)", st.TxWedges, st.TxBadHeaders, st.TxPadded)
	}
	waitUntil(t, "TX buffers released", func() bool { return released.Load() == int64(n) })
	t.Logf("through the EHCI model: RX %d frames in %v, TX %d frames in %v; ehci completed %d, doorbells %d",
		rxN, rxTime.Round(time.Millisecond), n, txTime.Round(time.Millisecond),
		r.hc.Stats.Completed.Load(), r.hc.Stats.AsyncAdvances.Load())

	r.sim.Detach(1)
	select {
	case p := <-detached:
		if p != port || !p.NIC.Gone() {
			t.Fatal("detached the wrong port, or its NIC is not gone")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no detach after unplug")
	}
	r.noMisuse(t)
}
