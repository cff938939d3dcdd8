//go:build linux

// Package tap opens Linux TAP devices: the wires of gowrt's sim mode. A
// simulated board's Ethernet port is connected to a TAP device, and real
// Linux tools in a network namespace on the other side talk to gowrt's
// real driver and stack code.
//
// Dev is the raw device (one Ethernet frame per read or write, no packet
// information header). NIC wraps a Dev in the gowrt NIC contract so a
// gVisor stack (through netstack.Endpoint) or the software bridge can use
// a TAP device directly as a port.
//
// Reads and writes go through the Go runtime's poller (the descriptor is
// non-blocking), so a goroutine blocked on a TAP device costs no thread,
// and Close unblocks a pending Read.
package tap

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrPermission is returned when the caller may not create TAP devices.
var ErrPermission = errors.New("tap: creating a TAP device needs root (CAP_NET_ADMIN) and /dev/net/tun")

// Dev is an open TAP device.
type Dev struct {
	f    *os.File
	name string
}

// Open creates (or attaches to) the TAP device name; an empty name lets
// the kernel choose (tap0, tap1, …). The device is created down; see Up.
func Open(name string) (*Dev, error) {
	if len(name) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("tap: interface name %q longer than %d bytes", name, unix.IFNAMSIZ-1)
	}
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("%w: %v", ErrPermission, err)
		}
		return nil, fmt.Errorf("tap: open /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("tap: %w", err)
	}
	ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%w: %v", ErrPermission, err)
		}
		return nil, fmt.Errorf("tap: TUNSETIFF %q: %w", name, err)
	}
	n := ifr.Name()
	return &Dev{f: os.NewFile(uintptr(fd), "tap:"+n), name: n}, nil
}

// Name is the interface name the kernel gave the device.
func (d *Dev) Name() string { return d.name }

// Read reads one frame into buf and returns its length. A frame longer
// than buf is truncated by the kernel; size buf for the largest frame.
func (d *Dev) Read(buf []byte) (int, error) { return d.f.Read(buf) }

// Write sends one frame.
func (d *Dev) Write(frame []byte) (int, error) { return d.f.Write(frame) }

// Close destroys the device (unless it was made persistent elsewhere) and
// unblocks pending reads.
func (d *Dev) Close() error { return d.f.Close() }

// Up sets the interface administratively up (IFF_UP) in the current
// network namespace. Tests that move the device into another namespace
// bring it up there with ip(8) instead.
func (d *Dev) Up() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq(d.name)
	if err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("tap: SIOCGIFFLAGS %s: %w", d.name, err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("tap: SIOCSIFFLAGS %s: %w", d.name, err)
	}
	return nil
}

// SetCarrier sets the device's carrier as the Linux side sees it
// (TUNSETCARRIER): down shows as NO-CARRIER there.
func (d *Dev) SetCarrier(up bool) error {
	sc, err := d.f.SyscallConn()
	if err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	v := 0
	if up {
		v = 1
	}
	var ierr error
	if err := sc.Control(func(fd uintptr) {
		ierr = unix.IoctlSetPointerInt(int(fd), unix.TUNSETCARRIER, v)
	}); err != nil {
		return fmt.Errorf("tap: %w", err)
	}
	if ierr != nil {
		return fmt.Errorf("tap: TUNSETCARRIER %s: %w", d.name, ierr)
	}
	return nil
}
