package usb

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Standard requests (USB 2.0 Table 9-4) and the endpoint halt feature
// (Table 9-6).
const (
	ReqGetStatus        = 0x00
	ReqClearFeature     = 0x01
	ReqSetFeature       = 0x03
	ReqSetAddress       = 0x05
	ReqGetDescriptor    = 0x06
	ReqGetConfiguration = 0x08
	ReqSetConfiguration = 0x09
	ReqGetInterface     = 0x0a
	ReqSetInterface     = 0x0b

	FeatureEndpointHalt = 0
)

// Timing (USB 2.0 §9.2.6.3; Linux include/linux/usb.h for the timeout).
const (
	// ControlTimeout is the default time a control request may take
	// (Linux USB_CTRL_GET_TIMEOUT, 5000 ms).
	ControlTimeout = 5 * time.Second
	// SetAddressRecovery: a device has 2 ms after SET_ADDRESS's status
	// stage before it must answer at the new address.
	SetAddressRecovery = 2 * time.Millisecond
	// LangEnglishUS is the LANGID strings are read in when the device
	// offers it (else its first).
	LangEnglishUS = 0x0409
)

// controlBufSize is the control transfer's buffer; a longer request (a
// big configuration) gets a bigger one made for it.
const controlBufSize = 1024

// Attachment is a driver bound to a device. Detach is called once, when
// the device goes away or the driver is unbound, after the device has
// been marked gone and before its pipes are aborted: the driver stops its
// MAC and stops submitting; it must not wait for its transfers (the core
// aborts them next).
type Attachment interface {
	Detach()
}

// Device is an enumerated device: addressed, its descriptors read, its
// control pipe open. Control requests are serialised; pipes the driver
// opens through it are torn down with it.
type Device struct {
	HC HostController
	// Port is the device's port number on its hub (the root hub for a
	// device on a root port); At is that port.
	Port int
	At   Port
	// Parent is the hub the device is behind (nil on a root port); Depth
	// counts the hubs between it and the root hub.
	Parent *Device
	Depth  int
	// TTAddress and TTPort name the transaction translator a low- or
	// full-speed device behind a high-speed hub is reached through (the
	// nearest high-speed hub's address and the port on it leading to the
	// device); 0 when there is none. Every pipe carries them
	// (PipeConfig.HubAddress/HubPort).
	TTAddress, TTPort uint8
	Speed             Speed
	Address           uint8
	Desc              DeviceDescriptor
	Configs           []ConfigDescriptor
	// Strings named by the device descriptor ("" when absent or
	// unreadable).
	Manufacturer, Product, Serial string

	addrs *Addresses
	lang  uint16

	ctlMu   sync.Mutex // one control request at a time (FreeBSD's ctrl sx)
	ep0     Pipe
	ctl     *Transfer
	ctlDone chan struct{}

	gone     atomic.Bool
	mu       sync.Mutex
	pipes    []*devicePipe
	driver   Attachment
	refs     int
	refsZero *sync.Cond
	detached chan struct{}
	once     sync.Once
	config   uint8
}

// Addresses hands out device addresses 1..127 on one controller's bus.
type Addresses struct {
	mu   sync.Mutex
	used [128]bool
	next int
}

// ErrNoAddress: all 127 addresses are taken.
var ErrNoAddress = errors.New("usb: no free device address")

// Alloc takes a free address, round-robin so a just-freed address is not
// reused at once (a stale pipe to it stays harmless longer).
func (a *Addresses) Alloc() (uint8, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range 127 {
		n := 1 + (a.next+i)%127
		if !a.used[n] {
			a.used[n] = true
			a.next = n % 127
			return uint8(n), nil
		}
	}
	return 0, ErrNoAddress
}

// Free returns an address.
func (a *Addresses) Free(n uint8) {
	a.mu.Lock()
	if n < 128 {
		a.used[n] = false
	}
	a.mu.Unlock()
}

// Enumerate brings up the device on hc's root port: bus reset, 8 bytes
// of the device descriptor at address 0 for bMaxPacketSize0, SET_ADDRESS
// with an address from addrs, the full device descriptor, every
// configuration (9 bytes, then wTotalLength), and the strings in English
// (US) if offered. The device is left unconfigured. Errors name the step;
// on error the port is disabled and the address freed.
func Enumerate(hc HostController, port int, addrs *Addresses) (*Device, error) {
	return EnumerateAt(hc, RootPort(hc, port), nil, addrs)
}

// EnumerateAt is Enumerate for a device on port p of hub parent (nil:
// p is a root port of hc). The device's Depth is its parent's plus one,
// and a low- or full-speed device behind a high-speed hub gets that hub's
// transaction translator (TTAddress, TTPort), inherited through any
// full-speed hubs between (USB 2.0 §11.14).
func EnumerateAt(hc HostController, p Port, parent *Device, addrs *Addresses) (*Device, error) {
	d := &Device{HC: hc, Port: p.Number(), At: p, Parent: parent, addrs: addrs,
		ctlDone: make(chan struct{}, 1), detached: make(chan struct{})}
	d.refsZero = sync.NewCond(&d.mu)
	fail := func(step string, err error) (*Device, error) {
		if d.ep0 != nil {
			d.ep0.Close()
		}
		p.Disable()
		if d.Address != 0 {
			addrs.Free(d.Address)
		}
		return nil, fmt.Errorf("%v: %s: %w", p, step, err)
	}
	speed, err := p.Reset()
	if err != nil {
		return fail("reset", err)
	}
	d.Speed = speed
	if parent != nil {
		d.Depth = parent.Depth + 1
		switch {
		case speed == SpeedHigh || speed == SpeedSuper:
		case parent.Speed == SpeedHigh:
			d.TTAddress, d.TTPort = parent.Address, uint8(p.Number())
		default:
			d.TTAddress, d.TTPort = parent.TTAddress, parent.TTPort
		}
	}
	// Until bMaxPacketSize0 is known, 8 bytes is a packet every device
	// can send (USB 2.0 §5.5.3); the first read asks for no more.
	mps := 64
	if speed == SpeedLow {
		mps = 8
	}
	if err := d.openEP0(0, mps); err != nil {
		return fail("open control pipe", err)
	}
	var buf [DeviceDescLen]byte
	n, err := d.GetDescriptor(DescDevice, 0, 0, buf[:8])
	if err == nil && n < 8 {
		err = descErr("device descriptor of %d bytes", n)
	}
	if err != nil {
		return fail("device descriptor (8 bytes)", err)
	}
	first, err := ParseDeviceDescriptor(buf[:8])
	if err != nil {
		return fail("device descriptor (8 bytes)", err)
	}
	if !ValidMaxPacket0(speed, first.MaxPacket0) {
		return fail("device descriptor (8 bytes)", descErr("bMaxPacketSize0 %d at %s speed", first.MaxPacket0, speed))
	}
	addr, err := addrs.Alloc()
	if err != nil {
		return fail("set address", err)
	}
	if _, err := d.Control(Setup{Request: ReqSetAddress, Value: uint16(addr)}, nil, ControlTimeout); err != nil {
		addrs.Free(addr)
		return fail(fmt.Sprintf("set address %d", addr), err)
	}
	d.Address = addr
	time.Sleep(SetAddressRecovery)
	d.ep0.Close()
	d.ep0 = nil
	if err := d.openEP0(addr, int(first.MaxPacket0)); err != nil {
		return fail("reopen control pipe", err)
	}
	n, err = d.GetDescriptor(DescDevice, 0, 0, buf[:])
	if err == nil && n < DeviceDescLen {
		err = descErr("device descriptor of %d bytes", n)
	}
	if err == nil {
		d.Desc, err = ParseDeviceDescriptor(buf[:])
	}
	if err != nil {
		return fail("device descriptor", err)
	}
	if d.Desc.MaxPacket0 != first.MaxPacket0 {
		return fail("device descriptor", descErr("bMaxPacketSize0 changed from %d to %d", first.MaxPacket0, d.Desc.MaxPacket0))
	}
	if d.Desc.NumConfigs == 0 || d.Desc.NumConfigs > maxConfigs {
		return fail("device descriptor", descErr("bNumConfigurations %d", d.Desc.NumConfigs))
	}
	for i := range d.Desc.NumConfigs {
		c, err := d.readConfig(i)
		if err != nil {
			return fail(fmt.Sprintf("configuration %d", i), err)
		}
		d.Configs = append(d.Configs, c)
	}
	d.readStrings()
	return d, nil
}

func (d *Device) openEP0(addr uint8, mps int) error {
	p, err := d.HC.OpenPipe(PipeConfig{Address: addr, Type: Control, MaxPacket: mps, Speed: d.Speed,
		HubAddress: d.TTAddress, HubPort: d.TTPort})
	if err != nil {
		return err
	}
	t, err := p.NewTransfer(controlBufSize)
	if err != nil {
		p.Close()
		return err
	}
	t.Done = d.controlDone
	d.ep0, d.ctl = p, t
	return nil
}

func (d *Device) controlDone(*Transfer) { d.ctlDone <- struct{}{} }

func (d *Device) readConfig(i uint8) (ConfigDescriptor, error) {
	var head [ConfigDescLen]byte
	n, err := d.GetDescriptor(DescConfiguration, i, 0, head[:])
	if err != nil {
		return ConfigDescriptor{}, err
	}
	total, err := ConfigTotalLength(head[:n])
	if err != nil {
		return ConfigDescriptor{}, err
	}
	full := make([]byte, total)
	n, err = d.GetDescriptor(DescConfiguration, i, 0, full)
	if err != nil {
		return ConfigDescriptor{}, err
	}
	return ParseConfigDescriptor(full[:n])
}

// readStrings reads the device's strings. Many devices stall string
// requests; a string that cannot be read stays empty.
func (d *Device) readStrings() {
	if d.Desc.Manufacturer == 0 && d.Desc.ProductName == 0 && d.Desc.Serial == 0 {
		return
	}
	var buf [255]byte
	n, err := d.GetDescriptor(DescString, 0, 0, buf[:])
	if err != nil {
		return
	}
	ids, err := ParseLangIDs(buf[:n])
	if err != nil {
		return
	}
	d.lang = ids[0]
	for _, id := range ids {
		if id == LangEnglishUS {
			d.lang = id
		}
	}
	d.Manufacturer, _ = d.GetString(d.Desc.Manufacturer)
	d.Product, _ = d.GetString(d.Desc.ProductName)
	d.Serial, _ = d.GetString(d.Desc.Serial)
}

func (d *Device) String() string {
	return fmt.Sprintf("%v addr %d (%04x:%04x)", d.At, d.Address, d.Desc.Vendor, d.Desc.Product)
}

// Control runs one control request and waits for it, at most timeout
// (0: ControlTimeout). For a device-to-host request up to s.Length bytes
// are read into data, which must hold them; for host-to-device, s.Length
// bytes of data are sent. It returns how many bytes the data stage moved.
//
// On any error n is 0 and data is not written: a caller never sees stale
// or half-transferred bytes it could mistake for a reply. A request that
// does not complete in time is cancelled and returns ErrTimeout; on a
// device that is gone, ErrGone. Requests are serialised per device.
func (d *Device) Control(s Setup, data []byte, timeout time.Duration) (int, error) {
	if int(s.Length) > len(data) {
		return 0, fmt.Errorf("usb: %v: buffer of %d bytes", s, len(data))
	}
	if timeout <= 0 {
		timeout = ControlTimeout
	}
	d.ctlMu.Lock()
	defer d.ctlMu.Unlock()
	if d.gone.Load() || d.ep0 == nil {
		return 0, fmt.Errorf("%v: %w", s, ErrGone)
	}
	t := d.ctl
	if int(s.Length) > len(t.Buf) {
		bigger, err := d.ep0.NewTransfer(int(s.Length))
		if err != nil {
			return 0, fmt.Errorf("%v: %w", s, err)
		}
		bigger.Done = d.controlDone
		d.ctl, t = bigger, bigger
	}
	t.Setup, t.Len, t.Flags = s, int(s.Length), ShortOK
	// The buffer is cleared so that a controller that reported more than
	// it wrote shows zeros, never the previous reply.
	clear(t.Buf[:t.Len])
	if !s.In() {
		copy(t.Buf, data[:s.Length])
	}
	if err := d.ep0.Submit(t); err != nil {
		if errors.Is(err, ErrClosed) {
			err = ErrGone
		}
		return 0, fmt.Errorf("%v: %w", s, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-d.ctlDone:
	case <-timer.C:
		d.ep0.Cancel(t)
		<-d.ctlDone
		timedOut = errors.Is(t.Err, ErrCancelled)
	}
	switch {
	case t.Err != nil && d.gone.Load():
		return 0, fmt.Errorf("%v: %w (%v)", s, ErrGone, t.Err)
	case timedOut:
		return 0, fmt.Errorf("%v: %w after %v", s, ErrTimeout, timeout)
	case t.Err != nil:
		return 0, fmt.Errorf("%v: %w", s, t.Err)
	}
	n := t.Actual
	if n < 0 || n > t.Len {
		return 0, fmt.Errorf("%v: controller reported %d bytes of %d: %w", s, n, t.Len, ErrDataBuffer)
	}
	if s.In() {
		copy(data, t.Buf[:n])
	}
	return n, nil
}

// GetDescriptor reads descriptor typ/index into buf (wLength = len(buf),
// at most 65535), returning its length.
func (d *Device) GetDescriptor(typ, index uint8, lang uint16, buf []byte) (int, error) {
	if len(buf) > 0xffff {
		buf = buf[:0xffff]
	}
	return d.Control(Setup{RequestType: RequestIn | RequestStandard | RecipientDevice,
		Request: ReqGetDescriptor, Value: uint16(typ)<<8 | uint16(index), Index: lang,
		Length: uint16(len(buf))}, buf, ControlTimeout)
}

// GetString reads string index in the device's language; index 0 is "".
func (d *Device) GetString(index uint8) (string, error) {
	if index == 0 {
		return "", nil
	}
	if d.lang == 0 {
		return "", fmt.Errorf("usb: %v has no string languages", d)
	}
	var buf [255]byte
	n, err := d.GetDescriptor(DescString, index, d.lang, buf[:])
	if err != nil {
		return "", err
	}
	return ParseString(buf[:n])
}

// SetConfiguration selects configuration value (0: unconfigured). The
// device's endpoints restart at DATA0 (USB 2.0 §9.1.1.5), so do the open
// pipes'.
func (d *Device) SetConfiguration(value uint8) error {
	if _, err := d.Control(Setup{Request: ReqSetConfiguration, Value: uint16(value)}, nil, ControlTimeout); err != nil {
		return err
	}
	d.mu.Lock()
	d.config = value
	pipes := append([]*devicePipe(nil), d.pipes...)
	d.mu.Unlock()
	for _, p := range pipes {
		p.ResetToggle()
	}
	return nil
}

// Config returns the descriptor of configuration value, or nil.
func (d *Device) Config(value uint8) *ConfigDescriptor {
	for i := range d.Configs {
		if d.Configs[i].Value == value {
			return &d.Configs[i]
		}
	}
	return nil
}

// SetInterface selects alternate setting alt of interface iface; the open
// pipes to that setting's endpoints restart at DATA0.
func (d *Device) SetInterface(iface, alt uint8) error {
	if _, err := d.Control(Setup{RequestType: RecipientIface, Request: ReqSetInterface,
		Value: uint16(alt), Index: uint16(iface)}, nil, ControlTimeout); err != nil {
		return err
	}
	d.mu.Lock()
	var it *InterfaceDescriptor
	if c := d.Config(d.config); c != nil {
		it = c.Interface(iface, alt)
	}
	pipes := append([]*devicePipe(nil), d.pipes...)
	d.mu.Unlock()
	if it == nil {
		return nil
	}
	for _, p := range pipes {
		for _, e := range it.Endpoints {
			if e.Address == p.cfg.Endpoint {
				p.ResetToggle()
			}
		}
	}
	return nil
}

// ClearHalt clears a halted endpoint: CLEAR_FEATURE(ENDPOINT_HALT), which
// resets the device's toggle to DATA0 (USB 2.0 §9.4.5), then the pipe's
// toggle to match. No transfer may be submitted on p meanwhile.
func (d *Device) ClearHalt(p Pipe) error {
	ep := p.Config().Endpoint
	if _, err := d.Control(Setup{RequestType: RecipientEndpt, Request: ReqClearFeature,
		Value: FeatureEndpointHalt, Index: uint16(ep)}, nil, ControlTimeout); err != nil {
		return err
	}
	p.ResetToggle()
	return nil
}

// OpenPipe opens a pipe to endpoint e of the device. The device tracks
// it: on teardown it is aborted and closed; once the device is gone its
// Submit returns ErrGone.
func (d *Device) OpenPipe(e EndpointDescriptor) (Pipe, error) {
	if d.gone.Load() {
		return nil, ErrGone
	}
	cfg := PipeConfig{Address: d.Address, Endpoint: e.Address, Type: e.Type(),
		MaxPacket: e.MaxPacketSize(), Speed: d.Speed, Interval: int(e.Interval),
		HubAddress: d.TTAddress, HubPort: d.TTPort}
	hp, err := d.HC.OpenPipe(cfg)
	if err != nil {
		return nil, fmt.Errorf("%v: endpoint %#02x: %w", d, e.Address, err)
	}
	p := &devicePipe{Pipe: hp, d: d, cfg: cfg}
	d.mu.Lock()
	if d.gone.Load() {
		d.mu.Unlock()
		hp.Close()
		return nil, ErrGone
	}
	d.pipes = append(d.pipes, p)
	d.mu.Unlock()
	return p, nil
}

// devicePipe is a controller's pipe that refuses work once its device is
// gone, so nothing touches a torn-down device.
type devicePipe struct {
	Pipe
	d   *Device
	cfg PipeConfig
}

func (p *devicePipe) Submit(t *Transfer) error {
	if p.d.gone.Load() {
		return ErrGone
	}
	return p.Pipe.Submit(t)
}

func (p *devicePipe) Close() {
	p.d.mu.Lock()
	for i, q := range p.d.pipes {
		if q == p {
			p.d.pipes = append(p.d.pipes[:i], p.d.pipes[i+1:]...)
			break
		}
	}
	p.d.mu.Unlock()
	p.Pipe.Close()
}

// Gone reports whether the device has been detached or unplugged.
func (d *Device) Gone() bool { return d.gone.Load() }

// Acquire takes a reference that keeps teardown from finishing (the
// address from being reused, the port from being disabled) until
// Release. Code outside the driver that uses the device (a management
// request, a statistics reader) holds one. It fails with ErrGone once
// teardown started.
func (d *Device) Acquire() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gone.Load() {
		return ErrGone
	}
	d.refs++
	return nil
}

// Release drops a reference taken by Acquire.
func (d *Device) Release() {
	d.mu.Lock()
	d.refs--
	if d.refs <= 0 {
		d.refsZero.Broadcast()
	}
	d.mu.Unlock()
}

// Attach binds drv to the device (drv.Attach runs now); its Detach runs
// at teardown.
func (d *Device) Attach(drv Driver) error {
	if d.gone.Load() {
		return ErrGone
	}
	d.mu.Lock()
	before := append([]*devicePipe(nil), d.pipes...)
	d.mu.Unlock()
	a, err := drv.Attach(d)
	if err != nil {
		// Close what the failed attach left open, so the next driver
		// (or teardown) starts clean.
		d.mu.Lock()
		var left []*devicePipe
		for _, p := range d.pipes {
			if !slices.Contains(before, p) {
				left = append(left, p)
			}
		}
		d.mu.Unlock()
		for _, p := range left {
			p.Close()
		}
		return fmt.Errorf("%s: %w", drv.Name(), err)
	}
	d.mu.Lock()
	d.driver = a
	d.mu.Unlock()
	return nil
}

// Detach tears the device down, in this order: mark it gone (new Control,
// OpenPipe, Acquire and Submit calls fail with ErrGone); the driver's
// Detach (stop the MAC); abort every pipe and wait for every transfer's
// Done; close the pipes (their buffers are freed); wait for the
// references to drop to zero; disable the port and free the address. It
// is called for an unplugged device too, and may be called more than
// once; every call returns when teardown is complete. It must not be
// called from a transfer's Done or the driver's Detach.
func (d *Device) Detach() {
	d.once.Do(d.teardown)
	<-d.detached
}

// Detached is closed when teardown is complete.
func (d *Device) Detached() <-chan struct{} { return d.detached }

func (d *Device) teardown() {
	d.mu.Lock()
	d.gone.Store(true)
	drv := d.driver
	d.driver = nil
	d.mu.Unlock()
	if drv != nil {
		drv.Detach()
	}
	d.mu.Lock()
	pipes := append([]*devicePipe(nil), d.pipes...)
	d.mu.Unlock()
	if d.ep0 != nil {
		d.ep0.Abort() // a control request in progress ends with ErrGone
	}
	for _, p := range pipes {
		p.Abort()
	}
	for _, p := range pipes {
		p.Close()
	}
	// Control checks gone under ctlMu: once we hold it, none is running
	// and none will start.
	d.ctlMu.Lock()
	if d.ep0 != nil {
		d.ep0.Close()
	}
	d.ctlMu.Unlock()
	d.mu.Lock()
	for d.refs > 0 {
		d.refsZero.Wait()
	}
	d.mu.Unlock()
	d.At.Disable()
	if d.Address != 0 {
		d.addrs.Free(d.Address)
	}
	close(d.detached)
}
