package ehci

import (
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// testDev is a small USB device for the controller's tests, until the
// usbsim device framework arrives: endpoint 0 answers SET_ADDRESS,
// GET_DESCRIPTOR(device), SET_CONFIGURATION, CLEAR_FEATURE(ENDPOINT_HALT)
// and a vendor OUT request; endpoint 1 is bulk OUT (it keeps what it
// gets), endpoint 2 bulk IN (it sends queued messages, each ending in a
// short or zero-length packet), endpoint 3 interrupt IN (a status report
// when one is queued, NAK otherwise). It keeps toggles as a device does.
// Its methods run with the hwsim lock held; tests change it in sys.Do.
type testDev struct {
	speed usb.Speed
	maxp  int // bulk max packet
	addr  uint8
	newAd int // address to take after the status stage, -1 none

	// Endpoint 0.
	req      usb.Setup
	resp     []byte
	respPos  int
	outData  []byte
	stage    int // 0 idle, 1 data IN, 2 data OUT, 3 status IN, 4 status OUT
	toggle0  uint8
	vendor   []byte // data of the last vendor OUT request
	inToggle [16]uint8
	outTog   [16]uint8
	stalled  [16]bool

	// Bulk OUT (1): everything received, bounded.
	got []byte
	// Bulk IN (2): queued messages.
	msgs    [][]byte
	msgPos  int
	babble  bool // next IN packet is a full maxp whatever the message
	nakLeft int  // NAK this many IN/OUT tokens first
	// Interrupt IN (3).
	status [][]byte

	Setups, Packets int
}

var devDescriptor = [18]byte{18, 1, 0x00, 0x02, 0xff, 0, 0, 64, 0x34, 0x12, 0x78, 0x56, 0x01, 0x00, 1, 2, 3, 1}

func newTestDev(speed usb.Speed, maxp int) *testDev {
	return &testDev{speed: speed, maxp: maxp, newAd: -1, got: make([]byte, 0, 8<<20)}
}

func (d *testDev) Speed() usb.Speed { return d.speed }

func (d *testDev) Reset() {
	d.addr, d.newAd, d.stage = 0, -1, 0
	d.inToggle, d.outTog = [16]uint8{}, [16]uint8{}
	d.stalled = [16]bool{}
}

func (d *testDev) Setup(addr uint8, pkt [8]byte) usbsim.Handshake {
	if addr != d.addr {
		return usbsim.NoResponse
	}
	d.Setups++
	d.req = usb.ParseSetup(pkt)
	d.toggle0 = 1
	d.resp, d.respPos, d.outData = nil, 0, d.outData[:0]
	r := d.req
	switch {
	case r.In() && r.Length > 0:
		d.stage = 1
		switch {
		case r.RequestType == 0x80 && r.Request == 6 && r.Value>>8 == 1:
			d.resp = devDescriptor[:min(int(r.Length), len(devDescriptor))]
		case r.RequestType == 0xc0 && r.Request == 0x02:
			d.resp = d.vendor[:min(int(r.Length), len(d.vendor))]
		default:
			d.resp = nil
			d.stage = -1 // STALL the data stage
		}
	case !r.In() && r.Length > 0:
		d.stage = 2
	default:
		d.stage = 3
	}
	return usbsim.ACK
}

func (d *testDev) In(addr, ep uint8, buf []byte) (int, uint8, usbsim.Handshake) {
	if addr != d.addr {
		return 0, 0, usbsim.NoResponse
	}
	d.Packets++
	switch ep {
	case 0:
		switch d.stage {
		case -1:
			return 0, 0, usbsim.STALL
		case 1:
			n := copy(buf, d.resp[d.respPos:])
			d.respPos += n
			t := d.toggle0
			d.toggle0 ^= 1
			if n < len(buf) || d.respPos == len(d.resp) {
				d.stage = 4
			}
			return n, t, usbsim.ACK
		case 3:
			d.finishRequest()
			d.stage = 0
			return 0, 1, usbsim.ACK
		}
		return 0, 0, usbsim.STALL
	case 2:
		if d.stalled[2] {
			return 0, 0, usbsim.STALL
		}
		if d.nakLeft > 0 {
			d.nakLeft--
			return 0, 0, usbsim.NAK
		}
		if d.babble {
			d.babble = false
			n := len(buf)
			for i := range buf {
				buf[i] = 0xbb
			}
			t := d.inToggle[2]
			d.inToggle[2] ^= 1
			return n, t, usbsim.ACK
		}
		if len(d.msgs) == 0 {
			return 0, 0, usbsim.NAK
		}
		m := d.msgs[0]
		n := copy(buf[:min(len(buf), d.maxp)], m[d.msgPos:])
		d.msgPos += n
		if n < d.maxp {
			d.msgs = d.msgs[1:]
			d.msgPos = 0
		}
		t := d.inToggle[2]
		d.inToggle[2] ^= 1
		return n, t, usbsim.ACK
	case 3:
		if len(d.status) == 0 {
			return 0, 0, usbsim.NAK
		}
		n := copy(buf, d.status[0])
		d.status = d.status[1:]
		t := d.inToggle[3]
		d.inToggle[3] ^= 1
		return n, t, usbsim.ACK
	}
	return 0, 0, usbsim.STALL
}

func (d *testDev) Out(addr, ep uint8, toggle uint8, data []byte) usbsim.Handshake {
	if addr != d.addr {
		return usbsim.NoResponse
	}
	d.Packets++
	switch ep {
	case 0:
		switch d.stage {
		case 2:
			if toggle != d.toggle0 {
				return usbsim.ACK
			}
			d.toggle0 ^= 1
			d.outData = append(d.outData, data...)
			if len(d.outData) >= int(d.req.Length) {
				d.stage = 3
			}
			return usbsim.ACK
		case 4:
			d.stage = 0
			return usbsim.ACK
		}
		return usbsim.STALL
	case 1:
		if d.stalled[1] {
			return usbsim.STALL
		}
		if d.nakLeft > 0 {
			d.nakLeft--
			return usbsim.NAK
		}
		if toggle != d.outTog[1] {
			return usbsim.ACK // a retransmission: dropped
		}
		d.outTog[1] ^= 1
		if len(d.got)+len(data) <= cap(d.got) {
			d.got = append(d.got, data...)
		}
		return usbsim.ACK
	}
	return usbsim.STALL
}

// finishRequest applies a request whose status stage just completed.
func (d *testDev) finishRequest() {
	r := d.req
	switch {
	case r.RequestType == 0 && r.Request == 5:
		d.addr = uint8(r.Value & 0x7f)
	case r.RequestType == 0 && r.Request == 9:
		d.inToggle, d.outTog = [16]uint8{}, [16]uint8{}
	case r.RequestType == 2 && r.Request == 1 && r.Value == 0:
		ep := r.Index & 0xf
		d.stalled[ep] = false
		d.inToggle[ep], d.outTog[ep] = 0, 0
	case r.RequestType == 0x40 && r.Request == 0x01:
		d.vendor = append(d.vendor[:0], d.outData...)
	}
}
