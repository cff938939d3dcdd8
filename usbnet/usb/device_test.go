package usb_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// source is a model whose bulk-in endpoint 0x81 sends numbered 64-byte
// packets without end (or queued ones), whose bulk-out 0x02 records, and
// whose vendor request 1 reads "hello".
type source struct {
	usbsim.BaseModel
	mu       sync.Mutex
	endless  bool
	seq      uint32
	queued   [][]byte
	received [][]byte
}

func (m *source) ControlIn(s usb.Setup, buf []byte) (int, usbsim.Handshake) {
	if s.Request == 1 {
		return copy(buf, "hello"), usbsim.ACK
	}
	return 0, usbsim.STALL
}

func (m *source) EndpointIn(ep uint8, buf []byte) (int, usbsim.Handshake) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queued) > 0 {
		n := copy(buf, m.queued[0])
		m.queued = m.queued[1:]
		return n, usbsim.ACK
	}
	if !m.endless {
		return 0, usbsim.NAK
	}
	m.seq++
	buf[0], buf[1], buf[2], buf[3] = byte(m.seq), byte(m.seq>>8), byte(m.seq>>16), byte(m.seq>>24)
	return 32, usbsim.ACK // short: one packet per transfer
}

func (m *source) EndpointOut(ep uint8, data []byte) usbsim.Handshake {
	m.mu.Lock()
	m.received = append(m.received, append([]byte(nil), data...))
	m.mu.Unlock()
	return usbsim.ACK
}

func (m *source) queue(b ...[]byte) { m.mu.Lock(); m.queued = append(m.queued, b...); m.mu.Unlock() }

func newSimDevice(m usbsim.Model) *usbsim.Device {
	return usbsim.NewDevice(usbsim.Config{
		Speed: usb.SpeedFull,
		Device: usbsim.DeviceDesc{Vendor: 0x0b95, Product: 0x1790, MaxPacket0: 8,
			Manufacturer: 1, ProductName: 2, Serial: 3},
		Configs: []usbsim.ConfigDesc{{Value: 1, Interfaces: []usbsim.InterfaceDesc{{
			Number: 0, Class: 0xff, SubClass: 0xff,
			Extra: [][]byte{{5, 0x24, 0, 0x20, 1}},
			Endpoints: []usbsim.EndpointDesc{
				{Address: 0x81, Type: usb.Bulk, MaxPacket: 64},
				{Address: 0x02, Type: usb.Bulk, MaxPacket: 64},
				{Address: 0x83, Type: usb.Interrupt, MaxPacket: 8, Interval: 11},
			}}}}},
		Strings: map[uint8]string{1: "ASIX Elec. Corp.", 2: "AX88179", 3: "0000249B1C"},
		Model:   m,
	})
}

func enumerate(t *testing.T, h *usbsim.Host, f usbsim.Function, addrs *usb.Addresses) *usb.Device {
	t.Helper()
	h.Plug(1, f)
	d, err := usb.Enumerate(h, 1, addrs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEnumerate(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	var addrs usb.Addresses
	sim := newSimDevice(&source{})
	d := enumerate(t, h, sim, &addrs)
	if d.Address == 0 || sim.Address() != d.Address {
		t.Fatalf("address %d, device thinks %d", d.Address, sim.Address())
	}
	if d.Desc.Vendor != 0x0b95 || d.Desc.Product != 0x1790 || d.Desc.MaxPacket0 != 8 || d.Speed != usb.SpeedFull {
		t.Fatalf("descriptor %+v", d.Desc)
	}
	if d.Manufacturer != "ASIX Elec. Corp." || d.Product != "AX88179" || d.Serial != "0000249B1C" {
		t.Fatalf("strings %q %q %q", d.Manufacturer, d.Product, d.Serial)
	}
	if len(d.Configs) != 1 || len(d.Configs[0].Interfaces) != 1 {
		t.Fatalf("configs %+v", d.Configs)
	}
	it := d.Configs[0].Interface(0, 0)
	if len(it.Endpoints) != 3 || len(it.Extra) != 1 || !bytes.Equal(it.Extra[0], []byte{5, 0x24, 0, 0x20, 1}) {
		t.Fatalf("interface %+v", it)
	}
	if c, i := d.FindInterface(0xff, 0xff, 0xff); c == nil || i != it {
		t.Fatal("FindInterface")
	}
	if !usb.MatchID(d, 0x0b95, 0x1790) {
		t.Fatal("MatchID")
	}
	// A second device on the other port gets another address.
	sim2 := newSimDevice(&source{})
	h.Plug(2, sim2)
	d2, err := usb.Enumerate(h, 2, &addrs)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Address == d.Address || sim2.Address() != d2.Address {
		t.Fatalf("addresses %d and %d", d.Address, d2.Address)
	}
	if err := d.SetConfiguration(1); err != nil || sim.Configuration() != 1 || sim2.Configuration() != 0 {
		t.Fatalf("SetConfiguration: %v, configs %d %d", err, sim.Configuration(), sim2.Configuration())
	}
	d.Detach()
	d2.Detach()
}

// badConfig is a model device whose configuration holds a descriptor
// with bLength 0 (a parser that trusts it loops forever).
func TestEnumerateErrorsNameTheStep(t *testing.T) {
	cases := []struct {
		name string
		dev  func() *usbsim.Device
		step string
		err  error
	}{
		{"zero bLength", func() *usbsim.Device {
			return usbsim.NewDevice(usbsim.Config{Device: usbsim.DeviceDesc{MaxPacket0: 64},
				Configs: []usbsim.ConfigDesc{{Value: 1, Interfaces: []usbsim.InterfaceDesc{{Extra: [][]byte{{0, 0x24}}}}}}})
		}, "configuration 0", usb.ErrDescriptor},
		{"bLength past the end", func() *usbsim.Device {
			return usbsim.NewDevice(usbsim.Config{Device: usbsim.DeviceDesc{MaxPacket0: 64},
				Configs: []usbsim.ConfigDesc{{Value: 1, Interfaces: []usbsim.InterfaceDesc{{Extra: [][]byte{{40, 0x24, 0}}}}}}})
		}, "configuration 0", usb.ErrDescriptor},
		{"bad max packet 0", func() *usbsim.Device {
			return usbsim.NewDevice(usbsim.Config{Device: usbsim.DeviceDesc{MaxPacket0: 7},
				Configs: []usbsim.ConfigDesc{{Value: 1}}})
		}, "device descriptor (8 bytes)", usb.ErrDescriptor},
		{"no configurations", func() *usbsim.Device {
			return usbsim.NewDevice(usbsim.Config{Device: usbsim.DeviceDesc{MaxPacket0: 64}})
		}, "device descriptor", usb.ErrDescriptor},
		{"stalls", func() *usbsim.Device {
			d := newSimDevice(&source{})
			d.FailControl(1, usbsim.STALL)
			return d
		}, "device descriptor (8 bytes)", usb.ErrStall},
		{"set address unanswered", func() *usbsim.Device {
			d := newSimDevice(&source{})
			d.FailControl(2, usbsim.NoResponse) // the first read retries once
			return d
		}, "", usb.ErrTransaction},
		{"vanished", func() *usbsim.Device {
			d := newSimDevice(&source{})
			d.Vanish(true)
			return d
		}, "device descriptor (8 bytes)", usb.ErrTransaction},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := usbsim.NewHost(usbsim.HostConfig{})
			defer h.Close()
			var addrs usb.Addresses
			h.Plug(1, c.dev())
			_, err := usb.Enumerate(h, 1, &addrs)
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.step) {
				t.Fatalf("err %v, want %v at %q", err, c.err, c.step)
			}
			if st, _ := h.PortStatus(1); st.Enabled {
				t.Fatal("port left enabled")
			}
			// The address went back: the next device gets address 1 or
			// 2 (round robin), and 125 more are free.
			n := 0
			for {
				if _, err := addrs.Alloc(); err != nil {
					break
				}
				n++
			}
			if n != 127 {
				t.Fatalf("%d addresses free after failure", n)
			}
		})
	}
}

func TestAddresses(t *testing.T) {
	var a usb.Addresses
	seen := map[uint8]bool{}
	for range 127 {
		n, err := a.Alloc()
		if err != nil || n < 1 || n > 127 || seen[n] {
			t.Fatalf("alloc %d %v", n, err)
		}
		seen[n] = true
	}
	if _, err := a.Alloc(); !errors.Is(err, usb.ErrNoAddress) {
		t.Fatal("128th address")
	}
	a.Free(42)
	if n, _ := a.Alloc(); n != 42 {
		t.Fatalf("got %d", n)
	}
}

func vendorRead(n uint16) usb.Setup {
	return usb.Setup{RequestType: usb.RequestIn | usb.RequestVendor, Request: 1, Length: n}
}

func TestControlErrorsReturnNoData(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	sim := newSimDevice(&source{})
	d := enumerate(t, h, sim, &usb.Addresses{})
	defer d.Detach()
	buf := make([]byte, 5)
	if n, err := d.Control(vendorRead(5), buf, 0); err != nil || n != 5 || string(buf) != "hello" {
		t.Fatalf("read %q %d %v", buf, n, err)
	}
	for _, fail := range []usbsim.Handshake{usbsim.STALL, usbsim.NoResponse} {
		sim.FailControl(1, fail)
		fresh := make([]byte, 5)
		n, err := d.Control(vendorRead(5), fresh, 0)
		if err == nil || n != 0 || !bytes.Equal(fresh, make([]byte, 5)) {
			t.Fatalf("%v: n %d err %v buf %q: the previous reply leaked", fail, n, err, fresh)
		}
	}
	// Slow device: the request times out, is cancelled, returns nothing;
	// the device recovers on the next SETUP.
	sim.SlowControl(0, 10*time.Second)
	fresh := make([]byte, 5)
	start := time.Now()
	n, err := d.Control(vendorRead(5), fresh, 30*time.Millisecond)
	if !errors.Is(err, usb.ErrTimeout) || n != 0 || !bytes.Equal(fresh, make([]byte, 5)) {
		t.Fatalf("timeout: n %d err %v buf %q", n, err, fresh)
	}
	// Well short of the device's 10 s, with room for a loaded host.
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("timeout took %v", el)
	}
	sim.SlowControl(0, 0)
	if n, err := d.Control(vendorRead(5), fresh, 0); err != nil || n != 5 {
		t.Fatalf("after timeout: %d %v", n, err)
	}
	if _, err := d.Control(vendorRead(8), make([]byte, 4), 0); err == nil {
		t.Fatal("wLength beyond the buffer accepted")
	}
}

// lyingHC reports every control read as complete to wLength, whatever
// arrived: the core must show zeros past the reply, never old bytes.
type lyingHC struct{ usb.HostController }

func (l lyingHC) OpenPipe(cfg usb.PipeConfig) (usb.Pipe, error) {
	p, err := l.HostController.OpenPipe(cfg)
	return lyingPipe{p}, err
}

type lyingPipe struct{ usb.Pipe }

func (p lyingPipe) Submit(t *usb.Transfer) error {
	done := t.Done
	t.Done = func(x *usb.Transfer) {
		x.Done = done
		if x.Err == nil && x.Setup.Request == 1 {
			x.Actual = x.Len
		}
		done(x)
	}
	return p.Pipe.Submit(t)
}

func TestControlNeverShowsStaleBuffer(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	h.Plug(1, newSimDevice(&source{}))
	d, err := usb.Enumerate(lyingHC{h}, 1, &usb.Addresses{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Detach()
	buf := make([]byte, 16)
	if _, err := d.Control(vendorRead(16), buf, 0); err != nil {
		t.Fatal(err)
	}
	// Fill the transfer buffer with something recognisable, then a read
	// of 5 the controller over-reports.
	if _, err := d.Control(usb.Setup{RequestType: usb.RequestVendor, Request: 2, Length: 16},
		bytes.Repeat([]byte{0xee}, 16), 0); !errors.Is(err, usb.ErrStall) {
		t.Fatal(err)
	}
	buf = make([]byte, 16)
	n, err := d.Control(vendorRead(16), buf, 0)
	if err != nil || n != 16 || string(buf[:5]) != "hello" || !bytes.Equal(buf[5:], make([]byte, 11)) {
		t.Fatalf("n %d %v % x", n, err, buf)
	}
}

func openBulkIn(t *testing.T, d *usb.Device) usb.Pipe {
	t.Helper()
	e, _ := d.Configs[0].Interfaces[0].Endpoint(usb.Bulk, true)
	p, err := d.OpenPipe(e)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readOnce(t *testing.T, p usb.Pipe, x *usb.Transfer) error {
	t.Helper()
	ch := make(chan struct{})
	x.Done = func(*usb.Transfer) { close(ch) }
	if err := p.Submit(x); err != nil {
		return err
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("transfer never completed")
	}
	return x.Err
}

// TestClearHaltResetsToggle shows that ClearHalt's toggle reset is what
// keeps data: a bare CLEAR_FEATURE leaves the host at DATA1 while the
// device restarted at DATA0, and the first packet after it is lost.
func TestClearHaltResetsToggle(t *testing.T) {
	for _, resetToggle := range []bool{true, false} {
		t.Run(fmt.Sprint("resetToggle=", resetToggle), func(t *testing.T) {
			h := usbsim.NewHost(usbsim.HostConfig{})
			defer h.Close()
			m := &source{}
			sim := newSimDevice(m)
			d := enumerate(t, h, sim, &usb.Addresses{})
			defer d.Detach()
			if err := d.SetConfiguration(1); err != nil {
				t.Fatal(err)
			}
			in := openBulkIn(t, d)
			x, _ := in.NewTransfer(64)
			x.Flags = usb.ShortOK
			m.queue([]byte("one"))
			if err := readOnce(t, in, x); err != nil {
				t.Fatal(err)
			}
			sim.Halt(0x81)
			if err := readOnce(t, in, x); !errors.Is(err, usb.ErrStall) {
				t.Fatalf("halted: %v", err)
			}
			if resetToggle {
				if err := d.ClearHalt(in); err != nil {
					t.Fatal(err)
				}
			} else if _, err := d.Control(usb.Setup{RequestType: usb.RecipientEndpt, Request: usb.ReqClearFeature,
				Value: usb.FeatureEndpointHalt, Index: 0x81}, nil, 0); err != nil {
				t.Fatal(err)
			}
			m.queue([]byte("two"), []byte("three"))
			if err := readOnce(t, in, x); err != nil {
				t.Fatal(err)
			}
			got := string(x.Buf[:x.Actual])
			if resetToggle && got != "two" {
				t.Fatalf("after ClearHalt got %q", got)
			}
			if !resetToggle && got != "three" {
				t.Fatalf("without the toggle reset got %q; the model should lose \"two\"", got)
			}
		})
	}
}

// inFlight measures transfers per second on one bulk-in endpoint with n
// transfers kept submitted, through a host with completion latency.
func inFlight(t testing.TB, n int, latency time.Duration, dur time.Duration) float64 {
	h := usbsim.NewHost(usbsim.HostConfig{Latency: latency})
	defer h.Close()
	m := &source{endless: true}
	sim := newSimDevice(m)
	h.Plug(1, sim)
	d, err := usb.Enumerate(h, 1, &usb.Addresses{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Detach()
	if err := d.SetConfiguration(1); err != nil {
		t.Fatal(err)
	}
	e, _ := d.Configs[0].Interfaces[0].Endpoint(usb.Bulk, true)
	in, err := d.OpenPipe(e)
	if err != nil {
		t.Fatal(err)
	}
	var done atomic.Int64
	var stop atomic.Bool
	var seqErr atomic.Int64
	var last uint32
	for range n {
		x, _ := in.NewTransfer(512)
		x.Flags = usb.ShortOK
		x.Done = func(x *usb.Transfer) {
			if x.Err != nil {
				return
			}
			seq := uint32(x.Buf[0]) | uint32(x.Buf[1])<<8 | uint32(x.Buf[2])<<16 | uint32(x.Buf[3])<<24
			if seq != last+1 {
				seqErr.Add(1) // completions out of order, or a packet lost
			}
			last = seq
			done.Add(1)
			if !stop.Load() {
				in.Submit(x)
			}
		}
		if err := in.Submit(x); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(dur)
	stop.Store(true)
	in.Abort()
	if seqErr.Load() != 0 {
		t.Fatalf("%d completions out of sequence", seqErr.Load())
	}
	return float64(done.Load()) / dur.Seconds()
}

func TestTransfersInFlight(t *testing.T) {
	const latency = 2 * time.Millisecond
	one := inFlight(t, 1, latency, 300*time.Millisecond)
	four := inFlight(t, 4, latency, 300*time.Millisecond)
	t.Logf("1 in flight: %.0f transfers/s, 4 in flight: %.0f transfers/s (ratio %.2f)", one, four, four/one)
	if four < 2.5*one {
		t.Fatalf("4 in flight only %.2fx of 1", four/one)
	}
}

// recorder notes the order of teardown steps.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

type recHC struct {
	usb.HostController
	r *recorder
}

func (h recHC) DisablePort(port int) error {
	h.r.add("disable port")
	return h.HostController.DisablePort(port)
}

func (h recHC) OpenPipe(cfg usb.PipeConfig) (usb.Pipe, error) {
	p, err := h.HostController.OpenPipe(cfg)
	return recPipe{p, h.r, cfg}, err
}

type recPipe struct {
	usb.Pipe
	r   *recorder
	cfg usb.PipeConfig
}

func (p recPipe) Abort() {
	if p.cfg.Endpoint != 0 {
		p.r.add(fmt.Sprintf("abort %#02x", p.cfg.Endpoint))
	}
	p.Pipe.Abort()
}

func (p recPipe) Close() {
	if p.cfg.Endpoint != 0 {
		p.r.add(fmt.Sprintf("close %#02x", p.cfg.Endpoint))
	}
	p.Pipe.Close()
}

// countingFunction counts the tokens that reach a device.
type countingFunction struct {
	usbsim.Function
	tokens atomic.Int64
}

func (c *countingFunction) Setup(a uint8, p [8]byte) usbsim.Handshake {
	c.tokens.Add(1)
	return c.Function.Setup(a, p)
}
func (c *countingFunction) In(a, ep uint8, b []byte) (int, uint8, usbsim.Handshake) {
	c.tokens.Add(1)
	return c.Function.In(a, ep, b)
}
func (c *countingFunction) Out(a, ep, tog uint8, b []byte) usbsim.Handshake {
	c.tokens.Add(1)
	return c.Function.Out(a, ep, tog, b)
}

// testDriver opens the bulk-in pipe, keeps 4 transfers in flight and
// records its Detach.
type testDriver struct {
	r        *recorder
	in       usb.Pipe
	xs       []*usb.Transfer
	dev      *usb.Device
	stopped  atomic.Bool
	inDone   atomic.Int64
	lateDone atomic.Int64 // Done after Detach returned with success
	goneCtl  error
}

func (drv *testDriver) Name() string             { return "test" }
func (drv *testDriver) Probe(d *usb.Device) bool { return usb.MatchID(d, 0x0b95, 0x1790) }
func (drv *testDriver) Attach(d *usb.Device) (usb.Attachment, error) {
	if err := d.SetConfiguration(1); err != nil {
		return nil, err
	}
	drv.dev = d
	e, _ := d.Configs[0].Interfaces[0].Endpoint(usb.Bulk, true)
	in, err := d.OpenPipe(e)
	if err != nil {
		return nil, err
	}
	drv.in = in
	for range 4 {
		x, err := drv.in.NewTransfer(512)
		if err != nil {
			return nil, err
		}
		x.Flags = usb.ShortOK
		x.Done = func(x *usb.Transfer) {
			drv.inDone.Add(1)
			if drv.stopped.Load() && x.Err == nil {
				drv.lateDone.Add(1)
			}
			if !drv.stopped.Load() && x.Err == nil {
				drv.in.Submit(x)
			}
		}
		if err := drv.in.Submit(x); err != nil {
			return nil, err
		}
		drv.xs = append(drv.xs, x)
	}
	return drv, nil
}

func (drv *testDriver) Detach() {
	drv.r.add(fmt.Sprintf("driver detach (gone=%v)", drv.dev.Gone()))
	_, drv.goneCtl = drv.dev.Control(vendorRead(5), make([]byte, 5), 0)
	drv.stopped.Store(true)
}

func TestDetachOrder(t *testing.T) {
	for _, unplug := range []bool{false, true} {
		t.Run(fmt.Sprint("unplug=", unplug), func(t *testing.T) {
			r := &recorder{}
			h := usbsim.NewHost(usbsim.HostConfig{Latency: 100 * time.Microsecond})
			defer h.Close()
			m := &source{endless: true}
			cf := &countingFunction{Function: newSimDevice(m)}
			h.Plug(1, cf)
			var addrs usb.Addresses
			d, err := usb.Enumerate(recHC{h, r}, 1, &addrs)
			if err != nil {
				t.Fatal(err)
			}
			drv := &testDriver{r: r}
			if err := d.Attach(drv); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond) // transfers running
			if drv.inDone.Load() == 0 {
				t.Fatal("no traffic before detach")
			}
			if err := d.Acquire(); err != nil {
				t.Fatal(err)
			}
			// The reference is dropped only once the pipes are closed:
			// teardown must still be waiting for it then.
			go func() {
				for !slices.Contains(r.list(), "close 0x81") {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(10 * time.Millisecond)
				r.add("release")
				d.Release()
			}()
			if unplug {
				h.Unplug(1)
			}
			d.Detach()
			r.add("detached")
			want := []string{"driver detach (gone=true)", "abort 0x81", "close 0x81", "release", "disable port", "detached"}
			if got := r.list(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("order\n got %q\nwant %q", got, want)
			}
			if !errors.Is(drv.goneCtl, usb.ErrGone) {
				t.Fatalf("Control from Detach: %v", drv.goneCtl)
			}
			if err := d.Acquire(); !errors.Is(err, usb.ErrGone) {
				t.Fatalf("Acquire after detach: %v", err)
			}
			if _, err := d.Control(vendorRead(5), make([]byte, 5), 0); !errors.Is(err, usb.ErrGone) {
				t.Fatalf("Control after detach: %v", err)
			}
			if err := drv.in.Submit(drv.xs[0]); !errors.Is(err, usb.ErrGone) {
				t.Fatalf("Submit after detach: %v", err)
			}
			if _, err := d.OpenPipe(d.Configs[0].Interfaces[0].Endpoints[0]); !errors.Is(err, usb.ErrGone) {
				t.Fatalf("OpenPipe after detach: %v", err)
			}
			// Nothing reaches the device after teardown.
			tokens := cf.tokens.Load()
			time.Sleep(20 * time.Millisecond)
			if n := cf.tokens.Load() - tokens; n != 0 {
				t.Fatalf("%d tokens after teardown", n)
			}
			if st, _ := h.PortStatus(1); st.Enabled {
				t.Fatal("port still enabled")
			}
			d.Detach() // idempotent
		})
	}
}

func TestBusAttachDetach(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{Ports: 2})
	defer h.Close()
	r := &recorder{}
	drv := &testDriver{r: r}
	var logs []string
	var logMu sync.Mutex
	b := usb.NewBus(h, usb.BusConfig{Drivers: []usb.Driver{drv}, Debounce: time.Millisecond,
		Log: func(s string) { logMu.Lock(); logs = append(logs, s); logMu.Unlock() }})
	m := &source{endless: true}
	h.Plug(1, newSimDevice(m))
	b.Start()
	defer b.Stop()
	waitFor(t, func() bool { return b.Stats().Attached == 1 })
	d := b.Device(1)
	if d == nil || d.Product != "AX88179" {
		t.Fatalf("device %v", d)
	}
	waitFor(t, func() bool { return drv.inDone.Load() > 10 })
	// A device no driver wants is enumerated and left alone.
	other := usbsim.NewDevice(usbsim.Config{Device: usbsim.DeviceDesc{Vendor: 1, Product: 2, MaxPacket0: 64},
		Configs: []usbsim.ConfigDesc{{Value: 1}}})
	h.Plug(2, other)
	waitFor(t, func() bool { return b.Stats().Unbound == 1 })
	h.Unplug(1)
	waitFor(t, func() bool { return b.Stats().Detached == 1 })
	if b.Device(1) != nil || !d.Gone() {
		t.Fatal("device still there")
	}
	if got := r.list(); len(got) != 1 || got[0] != "driver detach (gone=true)" {
		t.Fatalf("driver events %q", got)
	}
	// Plugged again: a fresh enumeration and attach.
	h.Plug(1, newSimDevice(&source{endless: true}))
	waitFor(t, func() bool { return b.Stats().Attached == 2 })
	if b.Device(1) == d || b.Device(1).Address == 0 {
		t.Fatal("not re-enumerated")
	}
	b.Stop()
	if s := b.Stats(); s.Detached != 3 {
		t.Fatalf("stats after Stop %+v", s)
	}
	logMu.Lock()
	defer logMu.Unlock()
	if len(logs) == 0 {
		t.Fatal("no log lines")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never came true")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestDevicePipeAllocatesNothing: a transfer through a pipe the device
// opened (the ErrGone guard around the controller's) allocates nothing.
func TestDevicePipeAllocatesNothing(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	m := &source{endless: true}
	d := enumerate(t, h, newSimDevice(m), &usb.Addresses{})
	defer d.Detach()
	if err := d.SetConfiguration(1); err != nil {
		t.Fatal(err)
	}
	in := openBulkIn(t, d)
	x, _ := in.NewTransfer(512)
	x.Flags = usb.ShortOK
	done := make(chan struct{}, 1)
	x.Done = func(*usb.Transfer) { done <- struct{}{} }
	step := func() {
		if err := in.Submit(x); err != nil {
			t.Fatal(err)
		}
		<-done
		if x.Err != nil || x.Actual != 32 {
			t.Fatal(x.Actual, x.Err)
		}
	}
	step()
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("%v allocations per transfer", n)
	}
}

type failingDriver struct{ opened usb.Pipe }

func (*failingDriver) Name() string           { return "failing" }
func (*failingDriver) Probe(*usb.Device) bool { return true }
func (f *failingDriver) Attach(d *usb.Device) (usb.Attachment, error) {
	e, _ := d.Configs[0].Interfaces[0].Endpoint(usb.Bulk, true)
	p, err := d.OpenPipe(e)
	if err != nil {
		return nil, err
	}
	f.opened = p
	return nil, errors.New("chip did not answer")
}

// TestAttachFailureClosesPipes: pipes a driver opened before its Attach
// failed are closed, so a second driver or teardown starts clean.
func TestAttachFailureClosesPipes(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	d := enumerate(t, h, newSimDevice(&source{}), &usb.Addresses{})
	defer d.Detach()
	f := &failingDriver{}
	if err := d.Attach(f); err == nil || !strings.Contains(err.Error(), "failing: chip did not answer") {
		t.Fatalf("attach: %v", err)
	}
	x, _ := f.opened.NewTransfer(64)
	x.Done = func(*usb.Transfer) {}
	if err := f.opened.Submit(x); !errors.Is(err, usb.ErrClosed) {
		t.Fatalf("pipe of a failed attach: %v", err)
	}
}

// TestSetInterfaceResetsToggles: after SET_INTERFACE the device's
// endpoints are at DATA0 and so must the host's be; the core resets the
// open pipes of that setting and no data is lost.
func TestSetInterfaceResetsToggles(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	m := &source{}
	sim := usbsim.NewDevice(usbsim.Config{
		Device: usbsim.DeviceDesc{MaxPacket0: 64},
		Configs: []usbsim.ConfigDesc{{Value: 1, Interfaces: []usbsim.InterfaceDesc{
			{Number: 0, Alternate: 0},
			{Number: 0, Alternate: 1, Endpoints: []usbsim.EndpointDesc{{Address: 0x81, Type: usb.Bulk, MaxPacket: 64}}},
		}}},
		Model: m,
	})
	d := enumerate(t, h, sim, &usb.Addresses{})
	defer d.Detach()
	if err := d.SetConfiguration(1); err != nil {
		t.Fatal(err)
	}
	if err := d.SetInterface(0, 1); err != nil {
		t.Fatal(err)
	}
	in, err := d.OpenPipe(d.Configs[0].Interface(0, 1).Endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	x, _ := in.NewTransfer(64)
	x.Flags = usb.ShortOK
	m.queue([]byte("a"))
	if err := readOnce(t, in, x); err != nil {
		t.Fatal(err)
	}
	// Host at DATA1 now; re-selecting the setting puts both at DATA0.
	if err := d.SetInterface(0, 1); err != nil {
		t.Fatal(err)
	}
	m.queue([]byte("b"))
	if err := readOnce(t, in, x); err != nil || string(x.Buf[:x.Actual]) != "b" {
		t.Fatalf("after SET_INTERFACE: %q %v", x.Buf[:x.Actual], err)
	}
	if err := d.SetInterface(0, 2); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("missing alternate: %v", err)
	}
}

// echo answers vendor request 3 with wValue, twice, little-endian.
type echo struct{ usbsim.BaseModel }

func (echo) ControlIn(s usb.Setup, buf []byte) (int, usbsim.Handshake) {
	if s.Request != 3 {
		return 0, usbsim.STALL
	}
	return copy(buf, []byte{byte(s.Value), byte(s.Value >> 8), byte(s.Value), byte(s.Value >> 8)}), usbsim.ACK
}

// TestControlSerialised: control requests from many goroutines to a slow
// device each get their own answer. Were two in flight, the second SETUP
// would abort the first on the device (USB 2.0 §8.5.3) and the first
// would fail or read the second's reply.
func TestControlSerialised(t *testing.T) {
	h := usbsim.NewHost(usbsim.HostConfig{})
	defer h.Close()
	sim := newSimDevice(echo{})
	d := enumerate(t, h, sim, &usb.Addresses{})
	defer d.Detach()
	sim.SlowControl(3, 0)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			buf := make([]byte, 4)
			for i := range 20 {
				v := uint16(g<<8 | i)
				n, err := d.Control(usb.Setup{RequestType: usb.RequestIn | usb.RequestVendor, Request: 3, Value: v, Length: 4}, buf, 0)
				if err != nil || n != 4 || buf[0] != byte(v) || buf[1] != byte(v>>8) || buf[2] != byte(v) {
					errs <- fmt.Errorf("request %#04x: n %d % x %v", v, n, buf, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
