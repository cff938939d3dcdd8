package uhci

import (
	"sync"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// testDev is a small full-speed device for the controller tests (the
// full usbsim framework lives on another branch): endpoint 0 answers
// GET_DESCRIPTOR (device, configuration) and SET_ADDRESS; bulk endpoint 2
// streams queued frames IN (each ends with a short packet or a
// zero-length one) and collects frames OUT; interrupt endpoint 1 sends
// queued 8-byte notifications. It keeps its own address and toggles.
//
// Its methods run under the hwsim lock (called by the model); the test
// side uses the mutex.
type testDev struct {
	mu sync.Mutex

	addr, pendingAddr uint8
	setAddr           bool
	toggleIn          [16]uint8
	toggleOut         [16]uint8
	halted            [16]bool // IN endpoint halted (STALL)

	// control
	ctlData []byte // IN data stage left to send
	ctlIn   bool
	ctlOK   bool // a request in progress that the device accepted

	// bulk
	inFrames  [][]byte
	inOff     int
	inZLP     bool // the current frame still owes its zero-length packet
	outFrame  []byte
	outFrames [][]byte
	// hostile knobs
	silent bool // answer nothing (a device that stopped talking)
	babble bool // bulk IN packets one byte longer than MaxPacket
	nakIn  bool // hold bulk IN (NAK) even with frames queued
	// sinkOut counts OUT frames in sunk instead of keeping them (no
	// allocation: the benchmarks and allocation tests).
	sinkOut bool
	sunk    int

	notes  [][]byte
	resets int
}

const (
	devMaxPacket0 = 64
	devBulkMP     = 64
	devVID        = 0x0525
	devPID        = 0xa4a2
)

var devDescriptor = []byte{18, 1, 0x00, 0x02, 2, 0, 0, devMaxPacket0,
	devVID & 0xff, devVID >> 8, devPID & 0xff, devPID >> 8, 0, 1, 0, 0, 0, 1}

// devConfig is a configuration descriptor with one interface and three
// endpoints (32 bytes: short of any 255-byte request).
var devConfig = []byte{
	9, 2, 32, 0, 1, 1, 0, 0xc0, 50,
	9, 4, 0, 0, 3, 0xff, 0, 0, 0,
	7, 5, 0x81, 3, 8, 0, 8,
	7, 5, 0x82, 2, devBulkMP, 0, 0,
}

func (d *testDev) Speed() usb.Speed { return usb.SpeedFull }

func (d *testDev) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addr, d.setAddr = 0, false
	d.toggleIn, d.toggleOut = [16]uint8{}, [16]uint8{}
	d.ctlData, d.ctlOK = nil, false
	d.resets++
}

func (d *testDev) Setup(addr uint8, pkt [8]byte) usbsim.Handshake {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.silent || addr != d.addr {
		return usbsim.NoResponse
	}
	s := usb.ParseSetup(pkt)
	d.toggleIn[0], d.toggleOut[0] = 1, 1
	d.ctlIn = s.In()
	d.ctlData, d.ctlOK, d.setAddr = nil, true, false
	switch {
	case s.RequestType == 0x80 && s.Request == 6 && s.Value>>8 == 1:
		d.ctlData = devDescriptor
	case s.RequestType == 0x80 && s.Request == 6 && s.Value>>8 == 2:
		d.ctlData = devConfig
	case s.RequestType == 0x00 && s.Request == 5:
		d.pendingAddr, d.setAddr = uint8(s.Value), true
	case s.RequestType == 0x02 && s.Request == 1: // CLEAR_FEATURE(ENDPOINT_HALT)
		ep := s.Index & 0x0f
		d.halted[ep] = false
		d.toggleIn[ep], d.toggleOut[ep] = 0, 0
	default:
		d.ctlOK = false // STALL in the data or status stage
	}
	if len(d.ctlData) > int(s.Length) {
		d.ctlData = d.ctlData[:s.Length]
	}
	return usbsim.ACK
}

func (d *testDev) In(addr, ep uint8, buf []byte) (int, uint8, usbsim.Handshake) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.silent || addr != d.addr {
		return 0, 0, usbsim.NoResponse
	}
	tg := d.toggleIn[ep]
	switch ep {
	case 0:
		if !d.ctlOK {
			return 0, 0, usbsim.STALL
		}
		if d.ctlIn {
			n := copy(buf[:min(len(buf), devMaxPacket0)], d.ctlData)
			d.ctlData = d.ctlData[n:]
			d.toggleIn[0] ^= 1
			return n, tg, usbsim.ACK
		}
		// Status stage of an OUT or no-data request.
		if d.setAddr {
			d.addr, d.setAddr = d.pendingAddr, false
		}
		d.ctlOK = false
		return 0, 1, usbsim.ACK
	case 1:
		if len(d.notes) == 0 {
			return 0, 0, usbsim.NAK
		}
		n := copy(buf, d.notes[0])
		d.notes = d.notes[1:]
		d.toggleIn[1] ^= 1
		return n, tg, usbsim.ACK
	case 2:
		if d.halted[2] {
			return 0, 0, usbsim.STALL
		}
		if len(d.inFrames) == 0 || d.nakIn {
			return 0, 0, usbsim.NAK
		}
		f := d.inFrames[0]
		n := min(devBulkMP, len(f)-d.inOff)
		if d.babble {
			n = min(devBulkMP+1, len(buf))
			for i := range buf[:n] {
				buf[i] = 0xee
			}
			d.toggleIn[2] ^= 1
			return n, tg, usbsim.ACK
		}
		copy(buf, f[d.inOff:d.inOff+n])
		d.inOff += n
		if d.inOff == len(f) && (n < devBulkMP || d.inZLP) {
			d.inFrames, d.inOff, d.inZLP = d.inFrames[1:], 0, false
		} else if d.inOff == len(f) {
			d.inZLP = true // a multiple of the packet size: a ZLP ends it
		}
		d.toggleIn[2] ^= 1
		return n, tg, usbsim.ACK
	}
	return 0, 0, usbsim.STALL
}

func (d *testDev) Out(addr, ep uint8, toggle uint8, data []byte) usbsim.Handshake {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.silent || addr != d.addr {
		return usbsim.NoResponse
	}
	switch ep {
	case 0:
		if !d.ctlOK {
			return usbsim.STALL
		}
		if d.ctlIn { // status stage of an IN request
			d.ctlOK = false
		}
		return usbsim.ACK
	case 2:
		if toggle != d.toggleOut[2] {
			return usbsim.ACK // a retransmission: dropped
		}
		d.toggleOut[2] ^= 1
		d.outFrame = append(d.outFrame, data...)
		if len(data) < devBulkMP && d.sinkOut {
			d.sunk++
			d.outFrame = d.outFrame[:0]
		} else if len(data) < devBulkMP {
			d.outFrames = append(d.outFrames, d.outFrame)
			d.outFrame = nil
		}
		return usbsim.ACK
	}
	return usbsim.STALL
}

func (d *testDev) queueIn(frames ...[]byte) {
	d.mu.Lock()
	for _, f := range frames {
		d.inFrames = append(d.inFrames, append([]byte(nil), f...))
	}
	d.mu.Unlock()
}

func (d *testDev) received() [][]byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([][]byte(nil), d.outFrames...)
}

func (d *testDev) set(f func(d *testDev)) {
	d.mu.Lock()
	f(d)
	d.mu.Unlock()
}
