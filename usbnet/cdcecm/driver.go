package cdcecm

import (
	"errors"
	"fmt"
	"sync"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// Class requests (ECM120 §6.2, Table 6) and the packet filter bits of
// SET_ETHERNET_PACKET_FILTER (Table 8).
const (
	reqSetEthernetPacketFilter = 0x43

	FilterPromiscuous  = 1 << 0
	FilterAllMulticast = 1 << 1
	FilterDirected     = 1 << 2
	FilterBroadcast    = 1 << 3
	FilterMulticast    = 1 << 4

	// DefaultFilter is what a router port needs: every frame (a bridge
	// port forwards frames for other stations), all multicast, directed
	// and broadcast.
	DefaultFilter = FilterPromiscuous | FilterAllMulticast | FilterDirected | FilterBroadcast

	// requestTimeout bounds the driver's control requests: a function
	// that does not answer in this time is broken (Linux cdc_ether uses
	// USB_CTRL_SET_TIMEOUT, 5 s; the core's default).
	requestTimeout = usb.ControlTimeout
	// stopTimeout bounds the request that quiesces the function on Stop,
	// which should not hold up a shutdown or an unplug for long.
	stopTimeout = 500 * time.Millisecond
)

// Errors of attaching.
var (
	ErrNotECM = errors.New("cdcecm: no CDC Ethernet interface")
)

// Driver is the usb.Driver for CDC-ECM functions. A board gives it to the
// USB core's Bus and learns about ports through OnAttach and OnDetach.
type Driver struct {
	// Filter is the packet filter set on attach (0: DefaultFilter).
	Filter uint16
	// RxTransfers and TxQueue size the framework's queues (0: defaults).
	RxTransfers, TxQueue int
	// OnAttach is called with each port once it is ready to Start; a
	// board adds its NIC to the router there. It runs on the Bus's
	// goroutine.
	OnAttach func(p *Port)
	// OnDetach is called when the port's device went away or the driver
	// was unbound, after the NIC stopped.
	OnDetach func(p *Port)
	// Log receives one line per notable event (nil: none).
	Log func(msg string)

	mu    sync.Mutex
	names int
}

// Name implements usb.Driver.
func (*Driver) Name() string { return "cdcecm" }

// Probe implements usb.Driver: any configuration with an interface of
// class Communications, subclass ECM.
func (*Driver) Probe(d *usb.Device) bool {
	c, _ := d.FindInterface(ClassCommunications, SubclassECM, 0xff)
	return c != nil
}

// Port is one attached CDC-ECM function: its NIC (a net.NIC) and what the
// driver learnt of the device.
type Port struct {
	*usbnet.NIC
	Name       string
	Device     *usb.Device
	Functional Functional
	Framing    *Framing
	// Config and DataAlt are the configuration value and the data
	// interface's alternate setting in use.
	Config, DataAlt uint8
	// FilterErrors counts packet-filter requests the function refused
	// (some functions stall it; frames flow regardless).
	FilterErrors int

	drv  *Driver
	once sync.Once
}

// ecmLayout is the interfaces and endpoints of an ECM function in one
// configuration.
type ecmLayout struct {
	cfg        *usb.ConfigDescriptor
	control    *usb.InterfaceDescriptor
	data       *usb.InterfaceDescriptor
	fd         Functional
	status     usb.EndpointDescriptor
	haveStatus bool
	in, out    usb.EndpointDescriptor
}

// findLayout picks the first configuration that has an ECM control
// interface whose functional descriptors parse and whose data interface
// has an alternate setting with a bulk endpoint each way. A device may
// list other configurations first (QEMU's usb-net lists RNDIS, value 2,
// before ECM, value 1).
func findLayout(d *usb.Device) (ecmLayout, error) {
	var firstErr error
	for ci := range d.Configs {
		c := &d.Configs[ci]
		for ii := range c.Interfaces {
			it := &c.Interfaces[ii]
			if it.Class != ClassCommunications || it.SubClass != SubclassECM {
				continue
			}
			l, err := layoutOf(c, it)
			if err == nil {
				return l, nil
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("configuration %d interface %d: %w", c.Value, it.Number, err)
			}
		}
	}
	if firstErr == nil {
		firstErr = ErrNotECM
	}
	return ecmLayout{}, firstErr
}

func layoutOf(c *usb.ConfigDescriptor, ctl *usb.InterfaceDescriptor) (ecmLayout, error) {
	var raw []byte
	for _, x := range ctl.Extra {
		raw = append(raw, x...)
	}
	fd, err := ParseFunctional(raw)
	if err != nil {
		return ecmLayout{}, err
	}
	if fd.ControlInterface != ctl.Number {
		return ecmLayout{}, fmt.Errorf("%w: union names control interface %d, not %d", ErrDescriptor, fd.ControlInterface, ctl.Number)
	}
	l := ecmLayout{cfg: c, control: ctl, fd: fd}
	l.status, l.haveStatus = ctl.Endpoint(usb.Interrupt, true)
	dataNum := fd.DataInterfaces[0]
	for i := range c.Interfaces {
		it := &c.Interfaces[i]
		if it.Number != dataNum || it.Class != ClassData {
			continue
		}
		in, okIn := it.Endpoint(usb.Bulk, true)
		out, okOut := it.Endpoint(usb.Bulk, false)
		if okIn && okOut && in.MaxPacketSize() > 0 && out.MaxPacketSize() > 0 {
			l.data, l.in, l.out = it, in, out
			return l, nil
		}
	}
	return ecmLayout{}, fmt.Errorf("%w: data interface %d has no setting with bulk IN and OUT", ErrNotECM, dataNum)
}

// Attach implements usb.Driver: it selects the ECM configuration, reads
// the MAC address string, selects the data interface's setting with the
// bulk endpoints, sets the packet filter and builds the NIC. The NIC is
// not started: the board does that once it has wired it up (OnAttach).
func (dr *Driver) Attach(d *usb.Device) (usb.Attachment, error) {
	l, err := findLayout(d)
	if err != nil {
		return nil, fmt.Errorf("cdcecm: %v: %w", d, err)
	}
	if err := d.SetConfiguration(l.cfg.Value); err != nil {
		return nil, fmt.Errorf("cdcecm: %v: SET_CONFIGURATION(%d): %w", d, l.cfg.Value, err)
	}
	macStr, err := d.GetString(l.fd.MACString)
	if err != nil {
		return nil, fmt.Errorf("cdcecm: %v: reading the MAC string %d: %w", d, l.fd.MACString, err)
	}
	mac, err := ParseMAC(macStr)
	if err != nil {
		return nil, fmt.Errorf("cdcecm: %v: %w", d, err)
	}
	// The data interface's setting with endpoints is selected before its
	// pipes open; the function resets its endpoints to DATA0 and so do
	// new pipes.
	if err := d.SetInterface(l.data.Number, l.data.Alternate); err != nil {
		return nil, fmt.Errorf("cdcecm: %v: SET_INTERFACE(%d, %d): %w", d, l.data.Number, l.data.Alternate, err)
	}
	p := &Port{Device: d, Functional: l.fd, Config: l.cfg.Value, DataAlt: l.data.Alternate, drv: dr}
	filter := dr.Filter
	if filter == 0 {
		filter = DefaultFilter
	}
	if err := p.setFilter(filter, requestTimeout); err != nil {
		if !errors.Is(err, usb.ErrStall) {
			return nil, fmt.Errorf("cdcecm: %v: %w", d, err)
		}
		p.FilterErrors++
		dr.logf("cdcecm: %v: packet filter refused (%v); continuing", d, err)
	}

	var pipes []usb.Pipe
	fail := func(err error) (usb.Attachment, error) {
		for _, pp := range pipes {
			pp.Close()
		}
		return nil, fmt.Errorf("cdcecm: %v: %w", d, err)
	}
	in, err := d.OpenPipe(l.in)
	if err != nil {
		return fail(err)
	}
	pipes = append(pipes, in)
	out, err := d.OpenPipe(l.out)
	if err != nil {
		return fail(err)
	}
	pipes = append(pipes, out)
	var status usb.Pipe
	if l.haveStatus {
		if status, err = d.OpenPipe(l.status); err != nil {
			return fail(err)
		}
		pipes = append(pipes, status)
	}

	maxSeg := int(l.fd.MaxSegmentSize)
	if maxSeg > gnet.RxBufSize {
		maxSeg = gnet.RxBufSize
	}
	mtu := min(maxSeg-gnet.EthHeaderLen, gnet.DefaultMTU)
	p.Framing = NewFraming(maxSeg)
	dr.mu.Lock()
	p.Name = fmt.Sprintf("usb%d", dr.names)
	dr.names++
	dr.mu.Unlock()
	cfg := usbnet.Config{
		Name: p.Name, In: in, Out: out, Framing: p.Framing, MAC: mac, MTU: mtu,
		RxTransfers: dr.RxTransfers, TxQueue: dr.TxQueue,
		Hooks: usbnet.Hooks{StopMAC: p.stopFunction, ClearHalt: d.ClearHalt, Gone: d.Gone},
	}
	if status != nil {
		cfg.Status = status // Link starts down until NETWORK_CONNECTION says otherwise.
	} else {
		// No notifications: a function without a status endpoint is
		// connected whenever it is configured (CDC120 §3.8.2 makes the
		// endpoint optional).
		cfg.Link = gnet.LinkState{Up: true, FullDuplex: true}
	}
	nic, err := usbnet.New(cfg)
	if err != nil {
		return fail(err)
	}
	p.NIC = nic
	dr.logf("cdcecm: %v: %s, MAC %v, configuration %d, data interface %d alt %d, wMaxSegmentSize %d",
		d, p.Name, mac, l.cfg.Value, l.data.Number, l.data.Alternate, l.fd.MaxSegmentSize)
	if dr.OnAttach != nil {
		dr.OnAttach(p)
	}
	return p, nil
}

func (dr *Driver) logf(format string, a ...any) {
	if dr.Log != nil {
		dr.Log(fmt.Sprintf(format, a...))
	}
}

// setFilter sends SET_ETHERNET_PACKET_FILTER (ECM120 §6.2.4): wValue the
// filter bitmap, wIndex the control interface, no data stage.
func (p *Port) setFilter(filter uint16, timeout time.Duration) error {
	_, err := p.Device.Control(usb.Setup{
		RequestType: usb.RequestClass | usb.RecipientIface,
		Request:     reqSetEthernetPacketFilter,
		Value:       filter,
		Index:       uint16(p.Functional.ControlInterface),
	}, nil, timeout)
	if err != nil {
		return fmt.Errorf("SET_ETHERNET_PACKET_FILTER(%#x): %w", filter, err)
	}
	return nil
}

// stopFunction is the NIC's StopMAC hook: the data interface goes back to
// its setting without endpoints, which stops the function's data path
// (ECM120 §3.3.1). On an unplugged device it fails at once (ErrGone);
// either way the NIC goes on to cancel its transfers.
func (p *Port) stopFunction() {
	if p.Device.Gone() {
		return
	}
	_, _ = p.Device.Control(usb.Setup{RequestType: usb.RecipientIface, Request: usb.ReqSetInterface,
		Value: 0, Index: uint16(p.Functional.DataInterfaces[0])}, nil, stopTimeout)
}

// Detach implements usb.Attachment: the NIC stops (the function's data
// path first, then every transfer cancelled and waited for, then the
// pipes closed) before the core tears the device down.
func (p *Port) Detach() {
	p.once.Do(func() {
		p.NIC.Stop()
		if p.drv.OnDetach != nil {
			p.drv.OnDetach(p)
		}
	})
}

var _ usb.Driver = (*Driver)(nil)
