package axgesim

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// setup enumerates the model through usbsim.Host and the USB core and
// programs it as a driver would: receiver started, medium set for the
// PHY, the given bulk-in control.
func setup(t *testing.T, cfg Config, q [5]byte) (*Chip, *usb.Device) {
	t.Helper()
	c := New(cfg)
	h := usbsim.NewHost(usbsim.HostConfig{Poll: 50 * time.Microsecond})
	h.Plug(1, c.Function())
	var addrs usb.Addresses
	d, err := usb.Enumerate(h, 1, &addrs)
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Detach(); h.Close() })
	if err := d.SetConfiguration(1); err != nil {
		t.Fatal(err)
	}
	write(t, d, rEPPRCR, []byte{eppIPRL, 0})
	write(t, d, rRCR, le16(rcrStart))
	write(t, d, rQCTRL, q[:])
	write(t, d, rMSR, le16(msrFor(cfg.Link)))
	return c, d
}

func le16(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }

func write(t *testing.T, d *usb.Device, reg uint16, b []byte) {
	t.Helper()
	s := usb.Setup{RequestType: usb.RequestVendor, Request: reqMAC, Value: reg, Index: uint16(len(b)), Length: uint16(len(b))}
	if _, err := d.Control(s, b, time.Second); err != nil {
		t.Fatalf("write %#x: %v", reg, err)
	}
}

func read(t *testing.T, d *usb.Device, req uint8, value, index uint16, n int) ([]byte, error) {
	t.Helper()
	b := make([]byte, n)
	s := usb.Setup{RequestType: usb.RequestVendor | usb.RequestIn, Request: req, Value: value, Index: index, Length: uint16(n)}
	_, err := d.Control(s, b, time.Second)
	return b, err
}

// pull reads one whole bulk-in transfer (up to a short packet) at the
// model's current time, or nil if the chip NAKs.
func pull(t *testing.T, c *Chip, d *usb.Device) []byte {
	t.Helper()
	var out []byte
	pkt := make([]byte, c.MaxPacket())
	for {
		n, _, h := c.Function().In(d.Address, EPBulkIn, pkt)
		if h == usbsim.NAK && out == nil {
			return nil
		}
		if h != usbsim.ACK {
			t.Fatalf("bulk-in %v mid-transfer", h)
		}
		out = append(out, pkt[:n]...)
		if n < len(pkt) {
			return out
		}
	}
}

var up1000 = Media{Up: true, SpeedMbps: 1000, FullDuplex: true, Pause: true}

func frame(n int) []byte {
	f := make([]byte, n)
	for i := range f {
		f[i] = byte(i)
	}
	return f
}

// parse reads the transfer's trailer and headers (the test's own parser).
func parse(t *testing.T, x []byte) (lens []int) {
	t.Helper()
	tr := binary.LittleEndian.Uint32(x[len(x)-4:])
	cnt, off := int(tr&0xFFFF), int(tr>>16)
	if len(x)%8 != 0 || off+4*cnt > len(x)-4 {
		t.Fatalf("transfer of %d bytes, count %d, offset %d", len(x), cnt, off)
	}
	for i := 0; i < cnt; i++ {
		if l := int(binary.LittleEndian.Uint32(x[off+4*i:]) >> 16 & 0x1FFF); l != 0 {
			lens = append(lens, l)
		}
	}
	return lens
}

func TestAggregationTimer(t *testing.T) {
	c, d := setup(t, Config{Link: up1000}, qHigh1000) // timer 800 µs, 22 KiB
	c.Deliver(frame(100))
	c.Deliver(frame(60))
	if x := pull(t, c, d); x != nil {
		t.Fatal("transfer ready before the timer expired")
	}
	c.Advance(799 * time.Microsecond)
	if x := pull(t, c, d); x != nil {
		t.Fatal("transfer ready at 799 µs")
	}
	c.Advance(800 * time.Microsecond)
	x := pull(t, c, d)
	if got := parse(t, x); len(got) != 2 || got[0] != 100 || got[1] != 60 {
		t.Fatalf("frames %v", got)
	}
}

func TestAggregationSize(t *testing.T) {
	c, d := setup(t, Config{Link: up1000}, qHigh1000)
	for i := 0; i < 15; i++ { // 15 × 1520 = 22800 > 22 KiB
		c.Deliver(frame(1514))
	}
	x := pull(t, c, d)
	if got := parse(t, x); len(got) != 15 {
		t.Fatalf("%d frames in the size-closed transfer", len(got))
	}
}

func TestFIFOFullDrops(t *testing.T) {
	c, _ := setup(t, Config{Link: up1000, RxFIFO: 8 << 10}, qHigh1000)
	for i := 0; i < 10; i++ {
		c.Deliver(frame(1514))
	}
	if st := c.Stats(); st.RxFrames != 5 || st.RxFIFODrops != 5 {
		t.Fatalf("%d in, %d dropped; want 5 and 5 in an 8 KiB FIFO", st.RxFrames, st.RxFIFODrops)
	}
}

func TestReceiverOffDrops(t *testing.T) {
	c, d := setup(t, Config{Link: up1000}, qHigh1000)
	write(t, d, rMSR, le16(0))
	c.Deliver(frame(60))
	if st := c.Stats(); st.RxOffDrops != 1 || st.RxFrames != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBulkOutBoundary: a transfer that ends exactly on a packet boundary
// with neither PAD nor a zero-length packet wedges bulk-out; with either,
// it does not.
func TestBulkOutBoundary(t *testing.T) {
	hdr := func(n int, pad bool) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(n))
		var w1 uint32
		if pad {
			w1 = txPadding
		}
		return binary.LittleEndian.AppendUint32(b, w1)
	}
	var tog uint8 // the host's toggle: DATA0 after SET_CONFIGURATION
	out := func(c *Chip, d *usb.Device, p []byte) usbsim.Handshake {
		h := c.Function().Out(d.Address, EPBulkOut, tog, p)
		if h == usbsim.ACK {
			tog ^= 1
		}
		return h
	}
	send := func(c *Chip, d *usb.Device, b []byte, zlp bool) usbsim.Handshake {
		var last usbsim.Handshake
		for len(b) > 0 {
			n := min(len(b), 512)
			if last = out(c, d, b[:n]); last != usbsim.ACK {
				return last
			}
			b = b[n:]
		}
		if zlp {
			last = out(c, d, nil)
		}
		return last
	}
	for _, tc := range []struct {
		name       string
		pad, zlp   bool
		wantWedged bool
	}{
		{"PAD flag and byte", true, false, false},
		{"zero-length packet", false, true, false},
		{"neither", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, d := setup(t, Config{Link: up1000}, qHigh1000)
			tog = 0
			b := append(hdr(504, tc.pad), frame(504)...)
			if tc.pad {
				b = append(b, 0)
			}
			send(c, d, b, tc.zlp)
			h := send(c, d, append(hdr(60, false), frame(60)...), false)
			if c.TxWedged() != tc.wantWedged || (h == usbsim.NAK) != tc.wantWedged {
				t.Fatalf("wedged %v (next frame %v), want %v", c.TxWedged(), h, tc.wantWedged)
			}
			st := c.Stats()
			if !tc.wantWedged && (st.TxFrames != 2 || st.TxBadHeaders != 0) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestFailingAndSlowControl: a failing request stalls; a slow one takes
// its time.
func TestFailingAndSlowControl(t *testing.T) {
	c, d := setup(t, Config{Link: up1000, MAC: [6]byte{2, 0, 0, 0, 0, 9}}, qHigh1000)
	if b, err := read(t, d, reqMAC, rNIDR, 6, 6); err != nil || b[5] != 9 {
		t.Fatalf("NODE_ID %x %v", b, err)
	}
	c.FailNextControl(1)
	if _, err := read(t, d, reqPHY, phyAddr, phyPHYSR, 2); err == nil {
		t.Fatal("failing read succeeded")
	}
	c.SlowControl(20 * time.Millisecond)
	start := time.Now()
	b, err := read(t, d, reqPHY, phyAddr, phyPHYSR, 2)
	if err != nil || binary.LittleEndian.Uint16(b) != up1000.physr() || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("slow read %x %v after %v", b, err, time.Since(start))
	}
}

// TestTornMediaDetection: an MSR that does not match the PHYSR read just
// before it is torn; one that does is not.
func TestTornMediaDetection(t *testing.T) {
	c, d := setup(t, Config{Link: up1000}, qHigh1000)
	if _, err := read(t, d, reqPHY, phyAddr, phyPHYSR, 2); err != nil {
		t.Fatal(err)
	}
	write(t, d, rQCTRL, qHigh1000[:])
	write(t, d, rMSR, le16(msrFor(up1000)))
	if st := c.Stats(); st.TornMedia != 0 {
		t.Fatalf("consistent programming counted torn: %+v", st)
	}
	write(t, d, rQCTRL, q100[:])
	write(t, d, rMSR, le16(msrFor(Media{Up: true, SpeedMbps: 100, FullDuplex: true})))
	if st := c.Stats(); st.TornMedia != 1 || st.MSRMismatch != 1 || st.Flaps != 2 {
		t.Fatalf("stale programming: %+v", st)
	}
}
