package usb

// HostController is what a host controller driver (usbnet/uhci,
// usbnet/ehci) gives the core: its root hub's ports and pipes to the
// endpoints of the devices behind them.
//
// The driver has gowrt's usual shape besides (New(Config), Start, Stop,
// an Interrupt method the board connects to the controller's line); those
// are not part of this interface because the board calls them, not the
// core.
type HostController interface {
	// Name identifies the controller in errors and counters ("uhci0").
	Name() string
	// Ports is the number of root hub ports; ports are numbered from 1.
	Ports() int
	// PortStatus reads a root port. It also clears the port's change
	// bits, so each connect or disconnect is reported once.
	PortStatus(port int) (PortStatus, error)
	// ResetPort drives a bus reset on the port, enables it, and returns
	// the speed of the device now in its default state (address 0).
	// USB 2.0 §7.1.7.5 and §9.2.6.3 timings are the driver's job.
	ResetPort(port int) (Speed, error)
	// DisablePort disables the port; transfers to devices behind it fail.
	DisablePort(port int) error
	// SetPortChange installs f, called from the controller's interrupt
	// context when a root port's connection changes (nil: no calls). It
	// must not block; the enumerator reads PortStatus from its own
	// goroutine.
	SetPortChange(f func(port int))
	// OpenPipe opens a pipe to one endpoint of one device.
	OpenPipe(cfg PipeConfig) (Pipe, error)
}

// PortStatus is the state of one root hub port.
type PortStatus struct {
	Connected bool
	Enabled   bool
	// ConnectChanged: connection state changed since the last PortStatus
	// (a device came, went, or was replaced).
	ConnectChanged bool
	// Speed of the attached device, valid when Connected (a UHCI port
	// tells only low versus full; an EHCI port owns high-speed devices).
	Speed       Speed
	Overcurrent bool
	// Suspended port.
	Suspended bool
}

// PipeConfig names an endpoint and what the controller needs to reach it.
type PipeConfig struct {
	// Address is the device's address, 0..127 (0 while unaddressed).
	Address uint8
	// Endpoint is bEndpointAddress: number in bits 3:0, EndpointIn for
	// IN. Control pipes use 0.
	Endpoint  uint8
	Type      TransferType
	MaxPacket int // wMaxPacketSize bits 10:0
	Speed     Speed
	// Interval is bInterval for interrupt endpoints: in frames (1 ms) for
	// low- and full-speed, 2^(Interval-1) microframes for high-speed
	// (USB 2.0 Table 9-13).
	Interval int
	// HubAddress and HubPort name the transaction translator of a low- or
	// full-speed device behind a high-speed hub (EHCI split transactions);
	// 0 for a device on a root port.
	HubAddress, HubPort uint8
}

// In reports whether the endpoint is an IN endpoint.
func (c PipeConfig) In() bool { return c.Endpoint&EndpointIn != 0 }

// Pipe is an open endpoint. Its methods are safe for concurrent use.
type Pipe interface {
	Config() PipeConfig
	// NewTransfer sets up a transfer of at most size bytes: its buffer
	// (DMA memory, len(Buf) == size) and the controller's descriptors for
	// it. Done must be set before the first Submit.
	NewTransfer(size int) (*Transfer, error)
	// Submit queues t on the endpoint; transfers on one pipe run in
	// submission order. It returns at once: the result comes in t.Done.
	// An error (ErrBusy, ErrClosed, ErrGone, or ErrCancelled while an
	// Abort or Close of the pipe is in progress, so a Done that resubmits
	// cannot keep the pipe busy) means t was not queued and Done will not
	// be called for this Submit.
	Submit(t *Transfer) error
	// Cancel takes t off the schedule and waits until the controller no
	// longer touches it or its buffer. If t was still queued or running,
	// Done is called with ErrCancelled (before Cancel returns); a transfer
	// that completed first keeps its result. Cancel must not be called
	// from Done.
	Cancel(t *Transfer)
	// Abort cancels every transfer on the pipe, as Cancel does.
	Abort()
	// ResetToggle sets the endpoint's data toggle to DATA0, as the device
	// does after CLEAR_FEATURE(ENDPOINT_HALT), SET_CONFIGURATION and
	// SET_INTERFACE (USB 2.0 §9.4.5, §9.1.1.5). Only while no transfer is
	// submitted.
	ResetToggle()
	// Close aborts the pipe and frees the controller's resources; its
	// transfers are invalid afterwards.
	Close()
}

// Transfer is one transfer on a pipe, made by Pipe.NewTransfer and reused.
type Transfer struct {
	// Buf is the transfer's buffer, DMA memory owned by the pipe. OUT:
	// the owner writes Len bytes into it before Submit. IN: the controller
	// writes up to Len bytes.
	Buf []byte
	// Len is how many bytes to send (OUT) or the most to receive (IN);
	// NewTransfer sets it to len(Buf). A control transfer's Len is its
	// data stage (may be 0) and must not exceed Setup.Length.
	Len int
	// Setup is the request of a transfer on a control pipe.
	Setup Setup
	Flags Flags
	// Done is called once per successful Submit, when the transfer
	// completed, failed or was cancelled, from the controller's completion
	// context; it may Submit t again.
	Done func(t *Transfer)

	// Actual is how many bytes were transferred (valid in Done). For a
	// failed IN transfer the bytes beyond what the controller reported
	// are not data.
	Actual int
	// Err is nil on success, else one of the package's errors (wrapped).
	Err error

	// HC is the host controller's private state for this transfer
	// (descriptors, DMA map). Owners do not touch it.
	HC any
}
