package usbsim

import (
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// hubSetup is a hub class request's SETUP packet.
func hubSetup(typ, req uint8, value, index, length uint16) [8]byte {
	return usb.Setup{RequestType: typ, Request: req, Value: value, Index: index, Length: length}.Bytes()
}

// hubControl runs one control transfer against f at addr, token by token,
// as a host controller would (data stage IN or none; OUT requests here
// have no data). It returns the data read or the handshake that ended it.
func hubControl(t *testing.T, f Function, addr uint8, pkt [8]byte) ([]byte, Handshake) {
	t.Helper()
	if hs := f.Setup(addr, pkt); hs != ACK {
		return nil, hs
	}
	s := usb.ParseSetup(pkt)
	var out []byte
	if s.In() && s.Length > 0 {
		tog := uint8(1)
		for {
			buf := make([]byte, 64)
			n, pid, hs := f.In(addr, 0, buf)
			if hs == NAK {
				continue
			}
			if hs != ACK {
				return nil, hs
			}
			if pid != tog {
				t.Fatalf("data PID %d, want %d", pid, tog)
			}
			tog ^= 1
			out = append(out, buf[:n]...)
			if n < 64 || len(out) >= int(s.Length) {
				break
			}
		}
		if hs := f.Out(addr, 0, 1, nil); hs != ACK {
			return nil, hs
		}
		return out, ACK
	}
	for {
		_, _, hs := f.In(addr, 0, nil)
		if hs != NAK {
			return nil, hs
		}
	}
}

func TestHubModel(t *testing.T) {
	h := NewHub(HubConfig{Ports: 3, ResetTime: 20 * time.Millisecond})
	child := NewDevice(Config{Speed: usb.SpeedHigh, Device: DeviceDesc{Vendor: 1, Product: 2}, Configs: []ConfigDesc{{Value: 1}}})
	h.Plug(2, child)
	h.Reset()
	// Address the hub, configure it.
	if _, hs := hubControl(t, h, 0, hubSetup(0, reqSetAddress, 9, 0, 0)); hs != ACK {
		t.Fatal(hs)
	}
	if _, hs := hubControl(t, h, 9, hubSetup(0, reqSetConfiguration, 1, 0, 0)); hs != ACK {
		t.Fatal(hs)
	}
	desc, hs := hubControl(t, h, 9, hubSetup(0xa0, reqGetDescriptor, 0x2900, 0, 71))
	if hs != ACK || len(desc) != 9 || desc[1] != 0x29 || desc[2] != 3 || desc[8] != 0xff {
		t.Fatalf("hub descriptor % x %v", desc, hs)
	}
	portStatus := func(port uint16) (uint16, uint16) {
		b, hs := hubControl(t, h, 9, hubSetup(0xa3, reqGetStatus, 0, port, 4))
		if hs != ACK || len(b) != 4 {
			t.Fatalf("port %d status % x %v", port, b, hs)
		}
		return uint16(b[0]) | uint16(b[1])<<8, uint16(b[2]) | uint16(b[3])<<8
	}
	// Unpowered: nothing to see, nothing to report.
	if st, ch := portStatus(2); st != 0 || ch != 0 {
		t.Fatalf("unpowered port: %#x %#x", st, ch)
	}
	var bitmap [1]byte
	if _, _, hs := h.In(9, 1, bitmap[:]); hs != NAK {
		t.Fatalf("status-change endpoint with nothing changed: %v", hs)
	}
	for p := uint16(1); p <= 3; p++ {
		if _, hs := hubControl(t, h, 9, hubSetup(0x23, reqSetFeature, portFeatPower, p, 0)); hs != ACK {
			t.Fatal(hs)
		}
	}
	// Power brings the connection: PORT_CONNECTION, C_PORT_CONNECTION,
	// high speed, and bit 2 in the bitmap.
	if n, _, hs := h.In(9, 1, bitmap[:]); hs != ACK || n != 1 || bitmap[0] != 1<<2 {
		t.Fatalf("bitmap %v %d %#x", hs, n, bitmap[0])
	}
	if st, ch := portStatus(2); st != portStPower|portStConnection|portStHighSpeed || ch != portChConnection {
		t.Fatalf("connected port: %#x %#x", st, ch)
	}
	hubControl(t, h, 9, hubSetup(0x23, reqClearFeature, portFeatCConnection, 2, 0))
	// Taken before the request: the model starts the reset's 20 ms
	// inside it, so a clock read after it returned could see the reset
	// end a little under 20 ms later (seen once under -race).
	began := time.Now()
	if _, hs := hubControl(t, h, 9, hubSetup(0x23, reqSetFeature, portFeatReset, 2, 0)); hs != ACK {
		t.Fatal(hs)
	}
	// In reset: PORT_RESET set, not enabled, the child unreachable.
	if st, _ := portStatus(2); st&portStReset == 0 || st&portStEnable != 0 {
		t.Fatalf("in reset: %#x", st)
	}
	if _, hs := hubControl(t, h, 0, hubSetup(0x80, reqGetDescriptor, 0x0100, 0, 8)); hs != NoResponse {
		t.Fatalf("address 0 during reset: %v", hs)
	}
	for {
		st, ch := portStatus(2)
		if ch&portChReset != 0 {
			if time.Since(began) < 20*time.Millisecond || st&portStEnable == 0 || st&portStReset != 0 {
				t.Fatalf("reset ended after %v: %#x %#x", time.Since(began), st, ch)
			}
			break
		}
		if time.Since(began) > time.Second {
			t.Fatal("reset never ended")
		}
		time.Sleep(time.Millisecond)
	}
	// The child answers at address 0 through the hub; the hub keeps its
	// own address.
	if d, hs := hubControl(t, h, 0, hubSetup(0x80, reqGetDescriptor, 0x0100, 0, 8)); hs != ACK || d[0] != 18 {
		t.Fatalf("child's descriptor through the hub: % x %v", d, hs)
	}
	// Unplugged: C_PORT_CONNECTION, disabled, the child no longer heard.
	h.Unplug(2)
	if st, ch := portStatus(2); st&(portStConnection|portStEnable) != 0 || ch&portChConnection == 0 {
		t.Fatalf("unplugged: %#x %#x", st, ch)
	}
	if _, hs := hubControl(t, h, 0, hubSetup(0x80, reqGetDescriptor, 0x0100, 0, 8)); hs != NoResponse {
		t.Fatalf("unplugged child answered: %v", hs)
	}
	// Hostile knobs.
	h.StallStatus(true)
	if _, hs := hubControl(t, h, 9, hubSetup(0xa3, reqGetStatus, 0, 1, 4)); hs != STALL {
		t.Fatalf("stalled status: %v", hs)
	}
	h.StallStatus(false)
	if _, hs := hubControl(t, h, 9, hubSetup(0xa3, reqGetStatus, 0, 4, 4)); hs != STALL {
		t.Fatalf("status of port 4 of 3: %v", hs)
	}
}

// TestHubRoutingAllocatesNothing: a token through the hub to a function
// behind it is per packet on the models' hot path.
func TestHubRoutingAllocatesNothing(t *testing.T) {
	h := NewHub(HubConfig{Ports: 2, ResetTime: time.Nanosecond})
	child := NewDevice(Config{Speed: usb.SpeedHigh, Device: DeviceDesc{Vendor: 1, Product: 2}, Configs: []ConfigDesc{{Value: 1}}})
	h.Plug(1, child)
	hubControl(t, h, 0, hubSetup(0, reqSetAddress, 9, 0, 0))
	hubControl(t, h, 9, hubSetup(0x23, reqSetFeature, portFeatPower, 1, 0))
	hubControl(t, h, 9, hubSetup(0x23, reqSetFeature, portFeatReset, 1, 0))
	time.Sleep(time.Millisecond)
	hubControl(t, h, 9, hubSetup(0xa3, reqGetStatus, 0, 1, 4))
	var buf [64]byte
	if allocs := testing.AllocsPerRun(1000, func() {
		if _, _, hs := h.In(5, 1, buf[:]); hs != NoResponse {
			t.Fatal(hs)
		}
		h.Out(5, 2, 0, buf[:8])
	}); allocs != 0 {
		t.Fatalf("%v allocations per routed token", allocs)
	}
}
