package usb

import "fmt"

// Port is where a device is plugged in: a root port of a host controller
// (RootPort) or a downstream port of a hub (the hub driver's). Enumerate
// drives a device's port through it, so a device behind a hub comes up
// exactly as one on a root port does.
type Port interface {
	// Number is the port's number on its hub (the root hub for a root
	// port), from 1.
	Number() int
	// String names the port in errors ("ehci0 port 1", "ehci0 port 1.2").
	String() string
	// Status reads the port and clears its connect-change indication,
	// as HostController.PortStatus does.
	Status() (PortStatus, error)
	// Reset drives a bus reset, enables the port and returns the speed of
	// the device now in its Default state (address 0).
	Reset() (Speed, error)
	// Disable disables the port; transfers to devices behind it fail.
	Disable() error
}

// RootPort is port n of hc's root hub as a Port.
func RootPort(hc HostController, n int) Port { return rootPort{hc: hc, n: n} }

type rootPort struct {
	hc HostController
	n  int
}

func (p rootPort) Number() int                 { return p.n }
func (p rootPort) String() string              { return fmt.Sprintf("%s port %d", p.hc.Name(), p.n) }
func (p rootPort) Status() (PortStatus, error) { return p.hc.PortStatus(p.n) }
func (p rootPort) Reset() (Speed, error)       { return p.hc.ResetPort(p.n) }
func (p rootPort) Disable() error              { return p.hc.DisablePort(p.n) }
