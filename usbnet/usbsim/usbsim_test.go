package usbsim

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// loop is a test model: bulk-in 0x81 sends what tests queue, bulk-out
// 0x02 records what arrives, vendor request 1 reads "hello", vendor
// request 2 stores its data.
type loop struct {
	BaseModel
	mu     sync.Mutex
	in     [][]byte
	out    [][]byte
	stored []byte
	config uint8
}

func (m *loop) ControlIn(s usb.Setup, buf []byte) (int, Handshake) {
	if s.Request == 1 {
		return copy(buf, "hello"), ACK
	}
	return 0, STALL
}

func (m *loop) ControlOut(s usb.Setup, data []byte) Handshake {
	if s.Request == 2 {
		m.mu.Lock()
		m.stored = append([]byte(nil), data...)
		m.mu.Unlock()
		return ACK
	}
	return STALL
}

func (m *loop) EndpointIn(ep uint8, buf []byte) (int, Handshake) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.in) == 0 {
		return 0, NAK
	}
	n := copy(buf, m.in[0])
	m.in[0] = m.in[0][n:]
	if n < len(buf) || len(m.in[0]) == 0 {
		m.in = m.in[1:]
	}
	return n, ACK
}

func (m *loop) EndpointOut(ep uint8, data []byte) Handshake {
	m.mu.Lock()
	m.out = append(m.out, append([]byte(nil), data...))
	m.mu.Unlock()
	return ACK
}

func (m *loop) SetConfiguration(v uint8) { m.mu.Lock(); m.config = v; m.mu.Unlock() }

func (m *loop) queue(p []byte) { m.mu.Lock(); m.in = append(m.in, p); m.mu.Unlock() }

func testDevice(m Model) *Device {
	return NewDevice(Config{
		Speed:  usb.SpeedFull,
		Device: DeviceDesc{Vendor: 0x1234, Product: 0x5678, MaxPacket0: 8, Manufacturer: 1, ProductName: 2},
		Configs: []ConfigDesc{{Value: 1, MaxPower: 50, Interfaces: []InterfaceDesc{{
			Number: 0, Class: 0xff,
			Endpoints: []EndpointDesc{
				{Address: 0x81, Type: usb.Bulk, MaxPacket: 64},
				{Address: 0x02, Type: usb.Bulk, MaxPacket: 64},
			}}}}},
		Strings: map[uint8]string{1: "gowrt", 2: "loop device"},
		Model:   m,
	})
}

// run submits t and waits for its Done.
func run(tb testing.TB, p usb.Pipe, t *usb.Transfer) error {
	tb.Helper()
	done := make(chan struct{})
	t.Done = func(*usb.Transfer) { close(done) }
	if err := p.Submit(t); err != nil {
		return err
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		tb.Fatal("transfer never completed")
	}
	return t.Err
}

func control(tb testing.TB, p usb.Pipe, s usb.Setup, data []byte) ([]byte, error) {
	tb.Helper()
	t, err := p.NewTransfer(int(s.Length))
	if err != nil {
		tb.Fatal(err)
	}
	t.Setup, t.Flags = s, usb.ShortOK
	copy(t.Buf, data)
	err = run(tb, p, t)
	return t.Buf[:t.Actual], err
}

func getDesc(typ, idx uint8, lang, n uint16) usb.Setup {
	return usb.Setup{RequestType: usb.RequestIn, Request: reqGetDescriptor,
		Value: uint16(typ)<<8 | uint16(idx), Index: lang, Length: n}
}

// attach plugs a device, addresses it as 5 and configures it; it returns
// the control pipe at the new address.
func attach(t *testing.T, h *Host, d *Device) usb.Pipe {
	t.Helper()
	h.Plug(1, d)
	if _, err := h.ResetPort(1); err != nil {
		t.Fatal(err)
	}
	p0, err := h.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := control(t, p0, usb.Setup{Request: reqSetAddress, Value: 5}, nil); err != nil {
		t.Fatal("SET_ADDRESS:", err)
	}
	p0.Close()
	p, err := h.OpenPipe(usb.PipeConfig{Address: 5, Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := control(t, p, usb.Setup{Request: reqSetConfiguration, Value: 1}, nil); err != nil {
		t.Fatal("SET_CONFIGURATION:", err)
	}
	return p
}

func TestStandardRequests(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	m := &loop{}
	d := testDevice(m)
	h.Plug(1, d)
	if _, err := h.ResetPort(1); err != nil {
		t.Fatal(err)
	}
	p0, _ := h.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	// 8 bytes of the device descriptor at address 0, then all of it
	// across three 8-byte packets.
	b, err := control(t, p0, getDesc(descDevice, 0, 0, 8), nil)
	if err != nil || !bytes.Equal(b, d.dev[:8]) {
		t.Fatalf("device[:8] = % x, %v", b, err)
	}
	b, err = control(t, p0, getDesc(descDevice, 0, 0, 64), nil)
	if err != nil || !bytes.Equal(b, d.dev) || len(b) != 18 {
		t.Fatalf("device = % x, %v", b, err)
	}
	// SET_ADDRESS: the device still answers at 0 until the status stage
	// is over, then only at 5.
	if _, err := control(t, p0, usb.Setup{Request: reqSetAddress, Value: 5}, nil); err != nil {
		t.Fatal(err)
	}
	if d.Address() != 5 {
		t.Fatalf("address %d", d.Address())
	}
	if _, err := control(t, p0, getDesc(descDevice, 0, 0, 18), nil); !errors.Is(err, usb.ErrTransaction) {
		t.Fatalf("address 0 after SET_ADDRESS: %v", err)
	}
	p, _ := h.OpenPipe(usb.PipeConfig{Address: 5, Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	conf := d.confs[0]
	b, err = control(t, p, getDesc(descConfiguration, 0, 0, 9), nil)
	if err != nil || !bytes.Equal(b, conf[:9]) {
		t.Fatalf("config[:9] = % x, %v", b, err)
	}
	if total := int(b[2]) | int(b[3])<<8; total != len(conf) || total != 9+9+7+7 {
		t.Fatalf("wTotalLength %d, built %d", total, len(conf))
	}
	b, err = control(t, p, getDesc(descString, 0, 0, 255), nil)
	if err != nil || !bytes.Equal(b, []byte{4, 3, 0x09, 0x04}) {
		t.Fatalf("string 0 = % x, %v", b, err)
	}
	b, err = control(t, p, getDesc(descString, 2, LangEnglishUS, 255), nil)
	if err != nil || !bytes.Equal(b, StringDesc("loop device")) {
		t.Fatalf("string 2 = % x, %v", b, err)
	}
	if _, err = control(t, p, getDesc(descString, 9, LangEnglishUS, 255), nil); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("missing string: %v", err)
	}
	// A request the device does not know stalls; the next SETUP works.
	if _, err = control(t, p, usb.Setup{RequestType: usb.RequestIn, Request: 0x77, Length: 2}, nil); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("unknown request: %v", err)
	}
	if _, err = control(t, p, usb.Setup{Request: reqSetConfiguration, Value: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if d.Configuration() != 1 || m.config != 1 {
		t.Fatalf("configuration %d, model %d", d.Configuration(), m.config)
	}
	b, err = control(t, p, usb.Setup{RequestType: usb.RequestIn, Request: reqGetConfiguration, Length: 1}, nil)
	if err != nil || !bytes.Equal(b, []byte{1}) {
		t.Fatalf("GET_CONFIGURATION = % x, %v", b, err)
	}
	// Vendor requests reach the model.
	b, err = control(t, p, usb.Setup{RequestType: usb.RequestIn | usb.RequestVendor, Request: 1, Length: 3}, nil)
	if err != nil || string(b) != "hel" {
		t.Fatalf("vendor read = %q, %v", b, err)
	}
	data := []byte("0123456789abcdefXYZ") // three packets of EP0
	if _, err = control(t, p, usb.Setup{RequestType: usb.RequestVendor, Request: 2, Length: uint16(len(data))}, data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.stored, data) {
		t.Fatalf("vendor write stored %q", m.stored)
	}
}

func TestBulkTogglesAndHalt(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	m := &loop{}
	d := testDevice(m)
	ctl := attach(t, h, d)
	in, _ := h.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x81, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull})
	out, _ := h.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x02, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull})
	rx, _ := in.NewTransfer(512)
	rx.Flags = usb.ShortOK
	frame := bytes.Repeat([]byte{0xa5}, 100)
	m.queue(frame)
	if err := run(t, in, rx); err != nil || !bytes.Equal(rx.Buf[:rx.Actual], frame) {
		t.Fatalf("rx %d bytes, %v", rx.Actual, err)
	}
	// Exact multiple of the max packet size with ZeroLengthPacket: 2
	// data packets and a zero-length one.
	tx, _ := out.NewTransfer(128)
	tx.Flags = usb.ZeroLengthPacket
	if err := run(t, out, tx); err != nil || tx.Actual != 128 {
		t.Fatalf("tx %d, %v", tx.Actual, err)
	}
	if len(m.out) != 3 || len(m.out[2]) != 0 {
		t.Fatalf("device saw %d packets", len(m.out))
	}
	// Halt: the transfer stalls; CLEAR_FEATURE clears it and resets the
	// device's toggle to DATA0.
	d.Halt(0x81)
	m.queue(frame)
	if err := run(t, in, rx); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("halted endpoint: %v", err)
	}
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientEndpt, Request: reqClearFeature, Value: featureEndpointHalt, Index: 0x81}, nil); err != nil {
		t.Fatal(err)
	}
	if d.Halted(0x81) {
		t.Fatal("still halted")
	}
	in.ResetToggle()
	if err := run(t, in, rx); err != nil || rx.Actual != len(frame) {
		t.Fatalf("after clear-halt: %d, %v", rx.Actual, err)
	}
	// The host is at DATA0 again after two packets; move it to DATA1 so
	// a device back at DATA0 disagrees.
	m.queue([]byte{1})
	if err := run(t, in, rx); err != nil || rx.Actual != 1 {
		t.Fatal(rx.Actual, err)
	}
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientEndpt, Request: reqClearFeature, Value: featureEndpointHalt, Index: 0x81}, nil); err != nil {
		t.Fatal(err)
	}
	// Without ResetToggle the host discards the device's first packet as
	// a retransmission: data lost.
	m.queue(frame[:10])
	m.queue(frame[:20])
	if err := run(t, in, rx); err != nil || rx.Actual != 20 {
		t.Fatalf("without ResetToggle: got %d bytes (%v), want the second packet only", rx.Actual, err)
	}
	if h.Stats().ToggleDiscards == 0 {
		t.Fatal("no discard counted")
	}
	// With ResetToggle nothing is lost.
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientEndpt, Request: reqClearFeature, Value: featureEndpointHalt, Index: 0x81}, nil); err != nil {
		t.Fatal(err)
	}
	in.ResetToggle()
	m.queue(frame[:10])
	if err := run(t, in, rx); err != nil || rx.Actual != 10 {
		t.Fatalf("with ResetToggle: %d, %v", rx.Actual, err)
	}
	// OUT side: the device drops a packet with the wrong toggle.
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientEndpt, Request: reqClearFeature, Value: featureEndpointHalt, Index: 0x02}, nil); err != nil {
		t.Fatal(err)
	}
	tx.Len, tx.Flags = 10, 0
	before := len(m.out)
	if err := run(t, out, tx); err != nil {
		t.Fatal(err)
	}
	if d.ToggleMismatches() != 1 || len(m.out) != before {
		t.Fatalf("mismatches %d, packets %d -> %d", d.ToggleMismatches(), before, len(m.out))
	}
}

func TestControlKnobs(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	m := &loop{}
	d := testDevice(m)
	ctl := attach(t, h, d)
	vread := usb.Setup{RequestType: usb.RequestIn | usb.RequestVendor, Request: 1, Length: 5}
	d.FailControl(1, STALL)
	if _, err := control(t, ctl, vread, nil); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("FailControl STALL: %v", err)
	}
	d.FailControl(1, NoResponse)
	if _, err := control(t, ctl, vread, nil); !errors.Is(err, usb.ErrTransaction) {
		t.Fatalf("FailControl NoResponse: %v", err)
	}
	if b, err := control(t, ctl, vread, nil); err != nil || string(b) != "hello" {
		t.Fatalf("after failures: %q %v", b, err)
	}
	d.SlowControl(0, 20*time.Millisecond)
	start := time.Now()
	if _, err := control(t, ctl, vread, nil); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("slow request took %v", el)
	}
	d.SlowControl(5, 0)
	naks := h.Stats().NAKs
	if b, err := control(t, ctl, vread, nil); err != nil || string(b) != "hello" {
		t.Fatalf("NAKing request: %q %v", b, err)
	}
	if n := h.Stats().NAKs - naks; n != 5 {
		t.Fatalf("%d NAKs, want 5", n)
	}
	d.SlowControl(0, 0)
	d.Vanish(true)
	if _, err := control(t, ctl, vread, nil); !errors.Is(err, usb.ErrTransaction) {
		t.Fatalf("vanished: %v", err)
	}
	d.Vanish(false)
}

func TestCancelAbortUnplug(t *testing.T) {
	h := NewHost(HostConfig{Latency: time.Millisecond})
	defer h.Close()
	m := &loop{}
	d := testDevice(m)
	attach(t, h, d)
	in, _ := h.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x81, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull})
	var mu sync.Mutex
	var results []error
	var xs []*usb.Transfer
	for range 4 {
		x, _ := in.NewTransfer(512)
		x.Flags = usb.ShortOK
		x.Done = func(t *usb.Transfer) { mu.Lock(); results = append(results, t.Err); mu.Unlock() }
		xs = append(xs, x)
		if err := in.Submit(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Submit(xs[0]); !errors.Is(err, usb.ErrBusy) {
		t.Fatalf("double submit: %v", err)
	}
	m.queue([]byte{1, 2, 3})
	time.Sleep(20 * time.Millisecond)
	in.Cancel(xs[1])
	mu.Lock()
	if len(results) != 2 || results[0] != nil || !errors.Is(results[1], usb.ErrCancelled) {
		t.Fatalf("after Cancel: %v", results)
	}
	mu.Unlock()
	in.Abort()
	mu.Lock()
	if len(results) != 4 {
		t.Fatalf("after Abort: %v", results)
	}
	mu.Unlock()
	// Unplug mid-transfer: ErrGone, and Submit refuses.
	x := xs[0]
	got := make(chan error, 1)
	x.Done = func(t *usb.Transfer) { got <- t.Err }
	if err := in.Submit(x); err != nil {
		t.Fatal(err)
	}
	h.Unplug(1)
	if err := <-got; !errors.Is(err, usb.ErrGone) {
		t.Fatalf("unplug: %v", err)
	}
	if err := in.Submit(x); !errors.Is(err, usb.ErrGone) {
		t.Fatalf("submit after unplug: %v", err)
	}
	in.Close()
	if err := in.Submit(x); !errors.Is(err, usb.ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
}

func TestPortChange(t *testing.T) {
	h := NewHost(HostConfig{Ports: 2})
	defer h.Close()
	ch := make(chan int, 4)
	h.SetPortChange(func(p int) { ch <- p })
	h.Plug(2, testDevice(&loop{}))
	if p := <-ch; p != 2 {
		t.Fatalf("change on %d", p)
	}
	st, _ := h.PortStatus(2)
	if !st.Connected || !st.ConnectChanged || st.Speed != usb.SpeedFull || st.Enabled {
		t.Fatalf("status %+v", st)
	}
	st, _ = h.PortStatus(2)
	if st.ConnectChanged {
		t.Fatal("change reported twice")
	}
	h.Unplug(2)
	<-ch
	st, _ = h.PortStatus(2)
	if st.Connected || !st.ConnectChanged {
		t.Fatalf("status after unplug %+v", st)
	}
	if _, err := h.ResetPort(2); err == nil {
		t.Fatal("reset of an empty port worked")
	}
	if _, err := h.PortStatus(3); err == nil {
		t.Fatal("port 3 exists")
	}
}

func TestDescriptorBytes(t *testing.T) {
	// USB 2.0 Table 9-8 layout, checked field by field.
	b := DeviceDesc{USB: 0x0200, MaxPacket0: 64, Vendor: 0x0b95, Product: 0x1790, Release: 0x0100, NumConfigs: 1}.Bytes()
	want := []byte{18, 1, 0x00, 0x02, 0, 0, 0, 64, 0x95, 0x0b, 0x90, 0x17, 0x00, 0x01, 0, 0, 0, 1}
	if !bytes.Equal(b, want) {
		t.Fatalf("device % x", b)
	}
	if s := StringDesc("Aé"); !bytes.Equal(s, []byte{6, 3, 'A', 0, 0xe9, 0}) {
		t.Fatalf("string % x", s)
	}
}

// endless sends a 64-byte packet on every IN token and takes every OUT.
type endless struct {
	BaseModel
}

func (endless) EndpointIn(ep uint8, buf []byte) (int, Handshake) { return len(buf), ACK }
func (endless) EndpointOut(ep uint8, data []byte) Handshake      { return ACK }

// bulkLoop returns a function that runs one 1536-byte bulk-in transfer
// (24 packets) and one 1514-byte bulk-out transfer through h, waiting for
// both.
func bulkLoop(tb testing.TB, h *Host) func() {
	d := testDevice(endless{})
	h.Plug(1, d)
	if _, err := h.ResetPort(1); err != nil {
		tb.Fatal(err)
	}
	// Address 0 is enough for the data path: configure at 0.
	p0, _ := h.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	x, _ := p0.NewTransfer(0)
	x.Setup = usb.Setup{Request: reqSetConfiguration, Value: 1}
	if err := runTB(tb, p0, x); err != nil {
		tb.Fatal(err)
	}
	in, _ := h.OpenPipe(usb.PipeConfig{Endpoint: 0x81, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull})
	out, _ := h.OpenPipe(usb.PipeConfig{Endpoint: 0x02, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull})
	rx, _ := in.NewTransfer(1536)
	tx, _ := out.NewTransfer(1514)
	done := make(chan struct{}, 2)
	rx.Done = func(*usb.Transfer) { done <- struct{}{} }
	tx.Done = rx.Done
	return func() {
		if err := in.Submit(rx); err != nil {
			tb.Fatal(err)
		}
		if err := out.Submit(tx); err != nil {
			tb.Fatal(err)
		}
		<-done
		<-done
		if rx.Err != nil || tx.Err != nil || rx.Actual != 1536 || tx.Actual != 1514 {
			tb.Fatalf("rx %d %v tx %d %v", rx.Actual, rx.Err, tx.Actual, tx.Err)
		}
	}
}

func runTB(tb testing.TB, p usb.Pipe, t *usb.Transfer) error {
	done := make(chan struct{})
	t.Done = func(*usb.Transfer) { close(done) }
	if err := p.Submit(t); err != nil {
		return err
	}
	<-done
	return t.Err
}

// TestHostAllocatesNothing: the model's data path allocates nothing per
// transfer, so drivers measured through it see only their own allocations.
func TestHostAllocatesNothing(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	step := bulkLoop(t, h)
	step()
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("%v allocations per transfer pair", n)
	}
}

func BenchmarkHostBulk(b *testing.B) {
	h := NewHost(HostConfig{})
	defer h.Close()
	step := bulkLoop(b, h)
	b.ReportAllocs()
	b.SetBytes(1536 + 1514)
	for b.Loop() {
		step()
	}
}

func TestStatusAndInterfaces(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	m := &loop{}
	// A CDC-style data interface: alternate 0 without endpoints, 1 with
	// a bulk pair (USB CDC 1.2 §3.8.2).
	d := NewDevice(Config{
		Device: DeviceDesc{MaxPacket0: 8},
		Configs: []ConfigDesc{{Value: 1, SelfPowered: true, Interfaces: []InterfaceDesc{
			{Number: 0, Class: 2, SubClass: 6, Endpoints: []EndpointDesc{{Address: 0x83, Type: usb.Interrupt, MaxPacket: 16, Interval: 8}}},
			{Number: 1, Alternate: 0, Class: 10},
			{Number: 1, Alternate: 1, Class: 10, Endpoints: []EndpointDesc{
				{Address: 0x81, Type: usb.Bulk, MaxPacket: 64}, {Address: 0x02, Type: usb.Bulk, MaxPacket: 64}}},
		}}},
		Model: m,
	})
	ctl := attach(t, h, d)
	getStatus := func(recip uint8, index uint16) ([]byte, error) {
		return control(t, ctl, usb.Setup{RequestType: usb.RequestIn | recip, Request: reqGetStatus, Index: index, Length: 2}, nil)
	}
	if b, err := getStatus(usb.RecipientDevice, 0); err != nil || !bytes.Equal(b, []byte{1, 0}) {
		t.Fatalf("device status % x %v (self-powered)", b, err)
	}
	// Alternate 0 has no bulk endpoints: they stall.
	if _, err := getStatus(usb.RecipientEndpt, 0x81); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("endpoint of an unselected setting: %v", err)
	}
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientIface, Request: reqSetInterface, Value: 1, Index: 1}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := control(t, ctl, usb.Setup{RequestType: usb.RequestIn | usb.RecipientIface, Request: reqGetInterface, Index: 1, Length: 1}, nil)
	if err != nil || !bytes.Equal(b, []byte{1}) {
		t.Fatalf("GET_INTERFACE % x %v", b, err)
	}
	if b, err := getStatus(usb.RecipientEndpt, 0x81); err != nil || !bytes.Equal(b, []byte{0, 0}) {
		t.Fatalf("endpoint status % x %v", b, err)
	}
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientEndpt, Request: reqSetFeature, Value: featureEndpointHalt, Index: 0x81}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := getStatus(usb.RecipientEndpt, 0x81); err != nil || !bytes.Equal(b, []byte{1, 0}) || !d.Halted(0x81) {
		t.Fatalf("halted endpoint status % x %v", b, err)
	}
	if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientIface, Request: reqSetInterface, Value: 2, Index: 1}, nil); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("missing alternate: %v", err)
	}
	// Back to alternate 0 and to 1 again: the endpoint is fresh (not
	// halted, DATA0).
	for _, alt := range []uint16{0, 1} {
		if _, err := control(t, ctl, usb.Setup{RequestType: usb.RecipientIface, Request: reqSetInterface, Value: alt, Index: 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d.Halted(0x81) {
		t.Fatal("SET_INTERFACE left the endpoint halted")
	}
	// SET_CONFIGURATION to a value that does not exist stalls; 0
	// unconfigures.
	if _, err := control(t, ctl, usb.Setup{Request: reqSetConfiguration, Value: 7}, nil); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("bad configuration: %v", err)
	}
	if _, err := control(t, ctl, usb.Setup{Request: reqSetConfiguration, Value: 0}, nil); err != nil || d.Configuration() != 0 || m.config != 0 {
		t.Fatalf("unconfigure: %v", err)
	}
	if _, err := getStatus(usb.RecipientEndpt, 0x83); !errors.Is(err, usb.ErrStall) {
		t.Fatalf("endpoint of an unconfigured device: %v", err)
	}
}

// TestControlWriteTooLong: a data stage longer than wLength is a
// protocol error the device stalls.
func TestControlWriteTooLong(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	m := &loop{}
	d := testDevice(m)
	h.Plug(1, d)
	h.ResetPort(1)
	if hs := d.Setup(0, usb.Setup{RequestType: usb.RequestVendor, Request: 2, Length: 4}.Bytes()); hs != ACK {
		t.Fatal(hs)
	}
	if hs := d.Out(0, 0, 1, []byte{1, 2, 3, 4, 5}); hs != STALL {
		t.Fatalf("5 bytes for wLength 4: %v", hs)
	}
	// Tokens for another address go unanswered.
	if _, _, hs := d.In(9, 0, make([]byte, 8)); hs != NoResponse {
		t.Fatalf("wrong address: %v", hs)
	}
}

func TestShortAndBabble(t *testing.T) {
	h := NewHost(HostConfig{})
	defer h.Close()
	m := &loop{}
	attach(t, h, testDevice(m))
	in, _ := h.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x81, Type: usb.Bulk, MaxPacket: 64, Speed: usb.SpeedFull})
	x, _ := in.NewTransfer(100)
	// A short packet ends the transfer; without ShortOK that is an error
	// (the bytes that came are still counted).
	m.queue(make([]byte, 10))
	if err := run(t, in, x); !errors.Is(err, usb.ErrShort) || x.Actual != 10 {
		t.Fatalf("short: %d %v", x.Actual, err)
	}
	// 64 + 64 bytes for a 100-byte transfer: the second packet babbles.
	m.queue(make([]byte, 128))
	x.Flags = usb.ShortOK
	if err := run(t, in, x); !errors.Is(err, usb.ErrBabble) || x.Actual != 64 {
		t.Fatalf("babble: %d %v", x.Actual, err)
	}
	// An exact fit ends without a short packet.
	x.Len = 64
	m.queue(make([]byte, 64))
	if err := run(t, in, x); err != nil || x.Actual != 64 {
		t.Fatalf("exact: %d %v", x.Actual, err)
	}
}
