package cdcecm_test

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/cdcecm"
	"github.com/gowrt/gowrt/usbnet/cdcecm/ecmsim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

var peerMAC = [6]byte{0x52, 0x54, 0x00, 0x12, 0x34, 0x57}

// handler records what the NIC reports.
type handler struct {
	mu       sync.Mutex
	frames   [][]byte
	links    []gnet.LinkState
	detached atomic.Bool
	late     atomic.Int32 // calls after the port was detached
	txReady  atomic.Int32
}

func (h *handler) Receive(f []byte) {
	if h.detached.Load() {
		h.late.Add(1)
	}
	h.mu.Lock()
	h.frames = append(h.frames, append([]byte(nil), f...))
	h.mu.Unlock()
}

func (h *handler) LinkChanged(l gnet.LinkState) {
	if h.detached.Load() {
		h.late.Add(1)
	}
	h.mu.Lock()
	h.links = append(h.links, l)
	h.mu.Unlock()
}

func (h *handler) TxReady() { h.txReady.Add(1) }

func (h *handler) nFrames() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.frames)
}

func (h *handler) lastLink() gnet.LinkState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.links) == 0 {
		return gnet.LinkState{}
	}
	return h.links[len(h.links)-1]
}

type bed struct {
	host     *usbsim.Host
	bus      *usb.Bus
	model    *ecmsim.Model
	drv      *cdcecm.Driver
	port     *cdcecm.Port
	h        *handler
	detached chan *cdcecm.Port
}

func newBed(t testing.TB, hc usbsim.HostConfig, m *ecmsim.Model, drv *cdcecm.Driver) *bed {
	t.Helper()
	if m == nil {
		m = ecmsim.New(peerMAC)
	}
	if drv == nil {
		drv = &cdcecm.Driver{}
	}
	b := &bed{host: usbsim.NewHost(hc), model: m, drv: drv, h: &handler{},
		detached: make(chan *cdcecm.Port, 1)}
	attached := make(chan *cdcecm.Port, 1)
	drv.OnAttach = func(p *cdcecm.Port) { attached <- p }
	drv.OnDetach = func(p *cdcecm.Port) {
		b.h.detached.Store(true)
		b.detached <- p
	}
	drv.Log = func(s string) { t.Log(s) }
	b.bus = usb.NewBus(b.host, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: time.Millisecond,
		Log: func(s string) { t.Log(s) }})
	t.Cleanup(b.host.Close)
	t.Cleanup(b.bus.Stop)
	b.bus.Start()
	b.host.Plug(1, m.Device)
	select {
	case b.port = <-attached:
	case <-time.After(10 * time.Second):
		t.Fatalf("no attach; bus %+v", b.bus.Stats())
	}
	if err := b.port.Start(b.h); err != nil {
		t.Fatal(err)
	}
	return b
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func testFrame(n int, seed byte) []byte {
	f := make([]byte, n)
	copy(f, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x52, 0x54, 0, 0x12, 0x34, 0x57, 0x08, 0x00})
	for i := 14; i < n; i++ {
		f[i] = seed + byte(i*7)
	}
	return f
}

type txBuf struct{ b []byte }

func (t txBuf) Segments() [][]byte { return [][]byte{t.b} }
func (t txBuf) Len() int           { return len(t.b) }
func (t txBuf) Release()           {}

func TestAttachQEMUModel(t *testing.T) {
	b := newBed(t, usbsim.HostConfig{}, nil, nil)
	p := b.port
	if p.Config != ecmsim.ConfigECM || p.DataAlt != 1 {
		t.Fatalf("configuration %d alt %d, want the ECM configuration (%d) alt 1 (RNDIS, %d, is listed first)",
			p.Config, p.DataAlt, ecmsim.ConfigECM, ecmsim.ConfigRNDIS)
	}
	if got := b.model.Device.Configuration(); got != ecmsim.ConfigECM {
		t.Fatalf("device in configuration %d", got)
	}
	if p.MACAddress() != gnet.MAC(b.model.HostMAC()) {
		t.Fatalf("MAC %v, want %v", p.MACAddress(), gnet.MAC(b.model.HostMAC()))
	}
	if p.MTU() != 1500 || p.Functional.MaxSegmentSize != 1514 {
		t.Fatalf("MTU %d, wMaxSegmentSize %d", p.MTU(), p.Functional.MaxSegmentSize)
	}
	if f := b.model.Filter(); f != cdcecm.DefaultFilter {
		t.Fatalf("packet filter %#x, want %#x", f, cdcecm.DefaultFilter)
	}
	waitFor(t, "link up from NETWORK_CONNECTION", func() bool { return p.Link().Up && b.h.lastLink().Up })
	if p.Name != "usb0" {
		t.Fatalf("name %q", p.Name)
	}
}

func TestFramesBothWays(t *testing.T) {
	b := newBed(t, usbsim.HostConfig{}, nil, nil)
	waitFor(t, "link up", func() bool { return b.port.Link().Up })
	sizes := []int{60, 63, 64, 65, 127, 128, 1000, 1472, 1514}
	for i, n := range sizes {
		if !b.model.Send(testFrame(n, byte(i))) {
			t.Fatal("model queue full")
		}
	}
	waitFor(t, "frames to the host", func() bool { return b.h.nFrames() == len(sizes) })
	b.h.mu.Lock()
	for i, n := range sizes {
		if !bytes.Equal(b.h.frames[i], testFrame(n, byte(i))) {
			t.Fatalf("frame %d (%d bytes) differs: got %d bytes", i, n, len(b.h.frames[i]))
		}
	}
	b.h.mu.Unlock()

	// Host to wire: multiples of 64 need the ZLP or the model would glue
	// them to the next frame.
	for i, n := range sizes {
		f := testFrame(n, byte(100+i))
		for {
			err := b.port.Transmit(txBuf{f})
			if err == nil {
				break
			}
			if !errors.Is(err, gnet.ErrTxFull) {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i, n := range sizes {
		select {
		case got := <-b.model.Frames():
			if !bytes.Equal(got, testFrame(n, byte(100+i))) {
				t.Fatalf("wire frame %d: %d bytes, want %d", i, len(got), n)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("wire frame %d missing", i)
		}
	}
	c := b.port.Counters()
	if c.RxFrames != uint64(len(sizes)) || c.TxFrames != uint64(len(sizes)) || c.Drops != [gnet.NumDropReasons]uint64{} {
		t.Fatalf("counters %+v", c)
	}
	if m := b.model.Device.ToggleMismatches(); m != 0 {
		t.Fatalf("%d toggle mismatches", m)
	}
}

func TestLinkUpDownAndSpeed(t *testing.T) {
	b := newBed(t, usbsim.HostConfig{}, nil, nil)
	waitFor(t, "link up", func() bool { return b.h.lastLink().Up })
	b.model.SetLink(false)
	waitFor(t, "link down", func() bool { return !b.h.lastLink().Up && !b.port.Link().Up })
	if err := b.port.Transmit(txBuf{testFrame(60, 0)}); !errors.Is(err, gnet.ErrLinkDown) {
		t.Fatalf("Transmit with link down: %v", err)
	}
	b.model.NotifySpeed(100_000_000, 100_000_000)
	b.model.SetLink(true)
	waitFor(t, "link up at 100", func() bool { l := b.h.lastLink(); return l.Up && l.SpeedMbps == 100 })
	// QEMU repeats NETWORK_CONNECTION every poll: no repeated reports.
	time.Sleep(100 * time.Millisecond)
	b.h.mu.Lock()
	n := len(b.h.links)
	b.h.mu.Unlock()
	if n > 5 {
		t.Fatalf("%d link reports for 3 changes", n)
	}
}

func TestStallRecovery(t *testing.T) {
	b := newBed(t, usbsim.HostConfig{}, nil, nil)
	waitFor(t, "link up", func() bool { return b.port.Link().Up })
	b.model.Send(testFrame(100, 1))
	waitFor(t, "first frame", func() bool { return b.h.nFrames() == 1 })
	b.model.Device.Halt(ecmsim.EndpointBulkIn)
	waitFor(t, "stall seen and recovered", func() bool {
		return b.port.Stats.Stalls.Load() >= 1 && b.port.Stats.Recoveries.Load() >= 1 &&
			!b.model.Device.Halted(ecmsim.EndpointBulkIn)
	})
	for i := 0; i < 5; i++ {
		b.model.Send(testFrame(200+i, byte(i)))
	}
	waitFor(t, "frames after recovery", func() bool { return b.h.nFrames() == 6 })
	b.h.mu.Lock()
	for i := 0; i < 5; i++ {
		if !bytes.Equal(b.h.frames[1+i], testFrame(200+i, byte(i))) {
			t.Fatalf("frame %d after recovery differs (toggle not reset?)", i)
		}
	}
	b.h.mu.Unlock()

	// Bulk-out: the stall costs the frame in flight, then frames flow.
	b.model.Device.Halt(ecmsim.EndpointBulkOut)
	_ = b.port.Transmit(txBuf{testFrame(90, 9)})
	waitFor(t, "bulk-out recovery", func() bool {
		return b.port.Stats.Recoveries.Load() >= 2 && !b.model.Device.Halted(ecmsim.EndpointBulkOut)
	})
	f := testFrame(300, 3)
	waitFor(t, "transmit after recovery", func() bool { return b.port.Transmit(txBuf{f}) == nil })
	select {
	case got := <-b.model.Frames():
		if !bytes.Equal(got, f) {
			t.Fatalf("frame after bulk-out recovery: %d bytes", len(got))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no frame after bulk-out recovery")
	}
	if m := b.model.Device.ToggleMismatches(); m != 0 {
		t.Fatalf("%d toggle mismatches after clear-halt", m)
	}
}

// TestUnplugMidTraffic: frames flow both ways when the device goes; the
// port is torn down (OnDetach after the NIC stopped), no handler call
// comes after, Transmit refuses, and the bus counts the detach.
func TestUnplugMidTraffic(t *testing.T) {
	b := newBed(t, usbsim.HostConfig{}, nil, nil)
	waitFor(t, "link up", func() bool { return b.port.Link().Up })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			b.model.Send(testFrame(64+i%1400, byte(i)))
			time.Sleep(50 * time.Microsecond)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-b.model.Frames():
			default:
			}
			_ = b.port.Transmit(txBuf{testFrame(64+i%1400, byte(i))})
			time.Sleep(50 * time.Microsecond)
		}
	}()
	waitFor(t, "traffic", func() bool { return b.h.nFrames() > 20 && b.port.Stats.TxFrames.Load() > 20 })
	dev := b.bus.Device(1)
	b.host.Unplug(1)
	var p *cdcecm.Port
	select {
	case p = <-b.detached:
	case <-time.After(10 * time.Second):
		t.Fatal("no detach after unplug")
	}
	select {
	case <-dev.Detached():
	case <-time.After(10 * time.Second):
		t.Fatal("device teardown did not finish")
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if p != b.port {
		t.Fatal("detached another port")
	}
	if n := b.h.late.Load(); n != 0 {
		t.Fatalf("%d handler calls after detach", n)
	}
	if err := b.port.Transmit(txBuf{testFrame(60, 0)}); err == nil {
		t.Fatal("Transmit accepted after unplug")
	}
	if st := b.bus.Stats(); st.Detached != 1 || st.Attached != 1 {
		t.Fatalf("bus stats %+v", st)
	}
	if b.h.lastLink().Up {
		b.h.mu.Lock()
		t.Fatalf("link still up after unplug: reports %v, NIC says %+v", b.h.links, b.port.Link())
	}
}

// TestSlowControlAttach: a function that NAKs its control requests for a
// while still attaches (the requests wait, within their timeout).
func TestSlowControlAttach(t *testing.T) {
	m := ecmsim.New(peerMAC)
	m.Device.SlowControl(5, 2*time.Millisecond)
	b := newBed(t, usbsim.HostConfig{}, m, nil)
	waitFor(t, "link up", func() bool { return b.port.Link().Up })
}

func TestAttachErrors(t *testing.T) {
	for name, cfg := range map[string]ecmsim.Config{
		"MAC string not hex":    {MAC: peerMAC, MACString: "40:54:00:12:34"},
		"MAC string multicast":  {MAC: peerMAC, MACString: "015400123457"},
		"no union descriptor":   {MAC: peerMAC, Functional: [][]byte{{0x05, 0x24, 0x00, 0x10, 0x01}, {0x0d, 0x24, 0x0f, 3, 0, 0, 0, 0, 0xea, 0x05, 0, 0, 0}}},
		"truncated descriptor":  {MAC: peerMAC, Functional: [][]byte{{0x05, 0x24, 0x00, 0x10, 0x01}, {0x05, 0x24, 0x06, 0x00}}},
		"union names data as 3": {MAC: peerMAC, Functional: [][]byte{{0x05, 0x24, 0x00, 0x10, 0x01}, {0x05, 0x24, 0x06, 0x00, 0x03}, {0x0d, 0x24, 0x0f, 3, 0, 0, 0, 0, 0xea, 0x05, 0, 0, 0}}},
	} {
		t.Run(name, func(t *testing.T) {
			host := usbsim.NewHost(usbsim.HostConfig{})
			defer host.Close()
			var logs []string
			var mu sync.Mutex
			drv := &cdcecm.Driver{OnAttach: func(*cdcecm.Port) { t.Error("attached") }}
			bus := usb.NewBus(host, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: time.Millisecond,
				Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() }})
			bus.Start()
			defer bus.Stop()
			host.Plug(1, ecmsim.NewConfig(cfg).Device)
			// A descriptor the core cannot parse fails enumeration; one
			// only the driver rejects fails the attach.
			waitFor(t, "attach failure", func() bool {
				st := bus.Stats()
				return st.AttachFailed+st.EnumerationFailed == 1
			})
			mu.Lock()
			t.Log(logs)
			mu.Unlock()
		})
	}
}

// TestRxTransfersInFlight measures frames/s from the model to the handler
// with one bulk-in transfer in flight and with four, on a host whose
// completions take 1 ms (a controller's interrupt latency): with one the
// endpoint idles for the latency after every frame.
func TestRxTransfersInFlight(t *testing.T) {
	rate := func(n int) float64 {
		b := newBed(t, usbsim.HostConfig{Latency: time.Millisecond}, nil, &cdcecm.Driver{RxTransfers: n})
		const frames = 200
		start := time.Now()
		go func() {
			for i := 0; i < frames; i++ {
				for !b.model.Send(testFrame(200, byte(i))) {
					time.Sleep(100 * time.Microsecond)
				}
			}
		}()
		waitFor(t, "frames", func() bool { return b.h.nFrames() == frames })
		return frames / time.Since(start).Seconds()
	}
	one, four := rate(1), rate(4)
	t.Logf("frames/s with 1 ms completion latency: 1 in flight %.0f, 4 in flight %.0f (x%.2f)", one, four, four/one)
	if four < 1.5*one {
		t.Fatalf("4 transfers in flight (%.0f frames/s) not clearly faster than 1 (%.0f)", four, one)
	}
}

// noZLP is the ECM framing written the wrong way: it never asks for the
// zero-length packet after a frame that fills its last packet.
type noZLP struct{ *cdcecm.Framing }

func (f noZLP) EncodeTx(dst []byte, segs [][]byte, n, maxPacket int) (int, usb.Flags, error) {
	l, flags, err := f.Framing.EncodeTx(dst, segs, n, maxPacket)
	return l, flags &^ usb.ZeroLengthPacket, err
}

// TestHazardNoZLP: without the ZLP, a frame whose length is a multiple of
// 64 does not end on the wire: the function glues it to the next one, and
// both are lost as one oversized or wrong frame. With the driver's framing
// (TestFramesBothWays) the same frames arrive intact. The wrong framing
// is plugged in through the framework directly, with the port's pipes.
func TestHazardNoZLP(t *testing.T) {
	send := func(t *testing.T, zlp bool) [][]byte {
		b := newBed(t, usbsim.HostConfig{}, nil, nil)
		waitFor(t, "link up", func() bool { return b.port.Link().Up })
		var fr usbnet.Framing = b.port.Framing
		if !zlp {
			fr = noZLP{b.port.Framing}
		}
		// The frames are encoded with fr and submitted on the port's own
		// bulk-out pipe (a second pipe to the endpoint would keep a data
		// toggle of its own); the port transmits nothing meanwhile.
		_, out, _ := b.port.Pipes()
		x, err := out.NewTransfer(2048)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		x.Done = func(x *usb.Transfer) { done <- x.Err }
		var got [][]byte
		for i, n := range []int{128, 100} {
			f := testFrame(n, byte(i))
			l, flags, err := fr.EncodeTx(x.Buf, [][]byte{f}, n, out.Config().MaxPacket)
			if err != nil {
				t.Fatal(err)
			}
			x.Len, x.Flags = l, flags
			if err := out.Submit(x); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.After(500 * time.Millisecond)
		for {
			select {
			case f := <-b.model.Frames():
				got = append(got, f)
				continue
			case <-deadline:
			}
			return got
		}
	}
	if got := send(t, true); len(got) != 2 || len(got[0]) != 128 || len(got[1]) != 100 {
		t.Fatalf("with the ZLP: %d frames", len(got))
	}
	got := send(t, false)
	if len(got) == 2 && len(got[0]) == 128 {
		t.Fatal("the model did not catch the missing ZLP")
	}
	t.Logf("without the ZLP the wire got %d frame(s) of %v bytes", len(got), lens(got))
}

func lens(fs [][]byte) []int {
	var l []int
	for _, f := range fs {
		l = append(l, len(f))
	}
	return l
}
