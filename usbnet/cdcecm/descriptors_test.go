package cdcecm

import (
	"bytes"
	"errors"
	"testing"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// qemuFunctional is what QEMU's usb-net (hw/usb/dev-network.c, CDC
// configuration) writes after its control interface: header (CDC 1.10),
// union (control 0, data 1), Ethernet networking (iMACAddress string 3,
// no statistics, wMaxSegmentSize 1514, no filters).
var qemuFunctional = []byte{
	0x05, 0x24, 0x00, 0x10, 0x01,
	0x05, 0x24, 0x06, 0x00, 0x01,
	0x0d, 0x24, 0x0f, 0x03, 0x00, 0x00, 0x00, 0x00, 0xea, 0x05, 0x00, 0x00, 0x00,
}

func TestParseFunctionalQEMU(t *testing.T) {
	f, err := ParseFunctional(qemuFunctional)
	if err != nil {
		t.Fatal(err)
	}
	if f.CDC != 0x0110 || f.ControlInterface != 0 || !bytes.Equal(f.DataInterfaces, []byte{1}) ||
		f.MACString != 3 || f.MaxSegmentSize != 1514 || f.Statistics != 0 || f.MulticastFilters != 0 {
		t.Fatalf("parsed %+v", f)
	}
	// Other descriptors after the header (call management, a vendor one)
	// are skipped.
	other := []byte{0x05, 0x24, 0x01, 0x00, 0x01, 0x03, 0x41, 0x99}
	mixed := append(append(append([]byte{}, qemuFunctional[:5]...), other...), qemuFunctional[5:]...)
	if g, err := ParseFunctional(mixed); err != nil || g.MACString != 3 {
		t.Fatalf("with extra descriptors: %+v, %v", g, err)
	}
}

func TestParseFunctionalErrors(t *testing.T) {
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), qemuFunctional...))
	}
	for name, tc := range map[string]struct {
		b    []byte
		want error
	}{
		"empty":             {nil, ErrMissing},
		"no union":          {append(append([]byte{}, qemuFunctional[:5]...), qemuFunctional[10:]...), ErrMissing},
		"no ethernet":       {qemuFunctional[:10], ErrMissing},
		"truncated":         {qemuFunctional[:20], ErrDescriptor},
		"bLength 0":         {mod(func(b []byte) []byte { b[5] = 0; return b }), ErrDescriptor},
		"bLength 1":         {mod(func(b []byte) []byte { b[5] = 1; return b }), ErrDescriptor},
		"bLength past end":  {mod(func(b []byte) []byte { b[10] = 14; return b }), ErrDescriptor},
		"short header":      {mod(func(b []byte) []byte { return append([]byte{0x04, 0x24, 0x00, 0x10}, b[5:]...) }), ErrDescriptor},
		"short union":       {mod(func(b []byte) []byte { b[5] = 4; return append(b[:9], b[10:]...) }), ErrDescriptor},
		"short ethernet":    {mod(func(b []byte) []byte { b[10] = 12; return b[:22] }), ErrDescriptor},
		"header twice":      {append(append([]byte{}, qemuFunctional[:5]...), qemuFunctional...), ErrDescriptor},
		"union first":       {append(append([]byte{}, qemuFunctional[5:10]...), qemuFunctional...), ErrDescriptor},
		"no MAC string":     {mod(func(b []byte) []byte { b[13] = 0; return b }), ErrDescriptor},
		"tiny segment size": {mod(func(b []byte) []byte { b[18], b[19] = 20, 0; return b }), ErrDescriptor},
		"stray byte":        {append(append([]byte{}, qemuFunctional...), 0x07), ErrDescriptor},
	} {
		if _, err := ParseFunctional(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

func FuzzParseFunctional(f *testing.F) {
	f.Add(qemuFunctional)
	f.Add(qemuFunctional[:12])
	f.Add([]byte{0x02, 0x24})
	f.Add([]byte{0x03, 0x24, 0x06})
	f.Fuzz(func(t *testing.T, b []byte) {
		fd, err := ParseFunctional(b)
		if err != nil {
			return
		}
		if fd.MACString == 0 || fd.MaxSegmentSize < maxSegmentMin || len(fd.DataInterfaces) == 0 {
			t.Fatalf("accepted %+v", fd)
		}
	})
}

func TestParseMAC(t *testing.T) {
	good := map[string]gnet.MAC{
		"400102030405": {0x40, 0x01, 0x02, 0x03, 0x04, 0x05}, // QEMU forces the first octet to 0x40
		"02AbCdEf0009": {0x02, 0xab, 0xcd, 0xef, 0x00, 0x09},
	}
	for s, want := range good {
		if m, err := ParseMAC(s); err != nil || m != want {
			t.Errorf("ParseMAC(%q) = %v, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "40010203040", "4001020304050", "40:01:02:03:04", "40010203040g",
		"000000000000", "010203040506" /* multicast */, "ffffffffffff", "４00102030405"} {
		if _, err := ParseMAC(s); !errors.Is(err, ErrMAC) {
			t.Errorf("ParseMAC(%q): %v, want ErrMAC", s, err)
		}
	}
}

func FuzzParseMAC(f *testing.F) {
	f.Add("400102030405")
	f.Add("zz0102030405")
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMAC(s)
		if err == nil && (len(s) != 12 || m.IsMulticast() || m.IsZero()) {
			t.Fatalf("accepted %q as %v", s, m)
		}
	})
}

func TestFramingTx(t *testing.T) {
	f := NewFraming(1514)
	dst := make([]byte, 1518)
	for _, tc := range []struct {
		n   int
		zlp bool
	}{{60, false}, {64, true}, {65, false}, {128, true}, {1514, false}, {1472, true}} {
		fr := make([]byte, tc.n)
		for i := range fr {
			fr[i] = byte(i)
		}
		l, flags, err := f.EncodeTx(dst, [][]byte{fr[:7], fr[7:]}, tc.n, 64)
		if err != nil || l != tc.n || !bytes.Equal(dst[:l], fr) {
			t.Fatalf("%d: %d, %v", tc.n, l, err)
		}
		if (flags&usb.ZeroLengthPacket != 0) != tc.zlp {
			t.Fatalf("%d bytes: flags %v, want ZLP %v", tc.n, flags, tc.zlp)
		}
	}
	if _, _, err := f.EncodeTx(dst, [][]byte{make([]byte, 1515)}, 1515, 64); !errors.Is(err, usbnet.ErrSize) {
		t.Fatalf("frame over wMaxSegmentSize: %v", err)
	}
	if _, _, err := f.EncodeTx(dst, [][]byte{make([]byte, 10)}, 100, 64); !errors.Is(err, usbnet.ErrSize) {
		t.Fatalf("segments shorter than n: %v", err)
	}
}

func TestFramingRx(t *testing.T) {
	f := NewFraming(1514)
	var got [][]byte
	deliver := func(b []byte) { got = append(got, b) }
	if d, _ := f.DecodeRx(make([]byte, 60), deliver); d != 0 || len(got) != 1 {
		t.Fatal("60-byte frame not delivered")
	}
	if d, why := f.DecodeRx(make([]byte, 13), deliver); d != 1 || why != gnet.DropRxUndersize {
		t.Fatalf("13 bytes: %d %v", d, why)
	}
	if d, why := f.DecodeRx(make([]byte, 1515), deliver); d != 1 || why != gnet.DropRxOversize {
		t.Fatalf("1515 bytes: %d %v", d, why)
	}
	if len(got) != 1 {
		t.Fatal("bad frame delivered")
	}
}

func TestParseStatus(t *testing.T) {
	f := NewFraming(1514)
	// QEMU's report (hw/usb/dev-network.c, ECM mode): NETWORK_CONNECTION,
	// wValue = connected, wIndex 1, wLength 0.
	up := []byte{0xa1, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00}
	down := []byte{0xa1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}
	// CONNECTION_SPEED_CHANGE, 100 Mbit/s both ways (ECM120 Table 21).
	speed := []byte{0xa1, 0x2a, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0xe1, 0xf5, 0x05, 0x00, 0xe1, 0xf5, 0x05}
	if l, ok := f.ParseStatus(up); !ok || !l.Up || l.SpeedMbps != 0 {
		t.Fatalf("up: %+v %v", l, ok)
	}
	if l, ok := f.ParseStatus(speed); !ok || !l.Up || l.SpeedMbps != 100 {
		t.Fatalf("speed: %+v %v", l, ok)
	}
	if l, ok := f.ParseStatus(down); !ok || l.Up {
		t.Fatalf("down: %+v %v", l, ok)
	}
	if l, ok := f.ParseStatus(up); !ok || l.SpeedMbps != 100 {
		t.Fatalf("up again keeps the speed: %+v %v", l, ok)
	}
	for _, bad := range [][]byte{
		nil, up[:7], {0x21, 0x00, 0x01, 0, 0, 0, 0, 0}, speed[:12],
		{0xa1, 0x00, 0x02, 0x00, 0, 0, 0, 0}, {0xa1, 0x2a, 0, 0, 0, 0, 0x04, 0, 1, 2, 3, 4},
	} {
		if _, ok := f.ParseStatus(bad); ok {
			t.Errorf("ParseStatus(% x) accepted", bad)
		}
	}
	if f.BadNotifications.Load() != 6 {
		t.Fatalf("BadNotifications %d", f.BadNotifications.Load())
	}
	if _, ok := f.ParseStatus([]byte{0xa1, 0x01, 0, 0, 0, 0, 0, 0}); ok {
		t.Fatal("RESPONSE_AVAILABLE taken as a link report")
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte{0xa1, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00})
	f.Add([]byte{0xa1, 0x2a, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0xe1, 0xf5, 0x05, 0x00, 0xe1, 0xf5, 0x05})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := NewFraming(1514)
		l, ok := fr.ParseStatus(b)
		if !ok && l != (gnet.LinkState{}) {
			t.Fatal("state with !ok")
		}
		if l.SpeedMbps < 0 || l.SpeedMbps > maxReportedSpeedMbits {
			t.Fatalf("speed %d", l.SpeedMbps)
		}
	})
}

func FuzzDecodeRx(f *testing.F) {
	f.Add(make([]byte, 60))
	f.Add(make([]byte, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr := NewFraming(1514)
		n := 0
		d, _ := fr.DecodeRx(b, func(x []byte) {
			n++
			if len(x) < gnet.EthHeaderLen || len(x) > 1514 {
				t.Fatalf("delivered %d bytes", len(x))
			}
		})
		if n+d != 1 {
			t.Fatalf("%d delivered + %d dropped", n, d)
		}
	})
}

// TestFramingZeroAllocs: the per-frame methods allocate nothing (the
// framework's own path is measured in package usbnet).
func TestFramingZeroAllocs(t *testing.T) {
	f := NewFraming(1514)
	dst := make([]byte, 1518)
	frame := make([]byte, 1514)
	segs := [][]byte{frame[:14], frame[14:]}
	n := 0
	deliver := func(b []byte) { n += len(b) }
	up := []byte{0xa1, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00}
	a := testing.AllocsPerRun(1000, func() {
		_, _, _ = f.EncodeTx(dst, segs, len(frame), 64)
		f.DecodeRx(frame, deliver)
		f.ParseStatus(up)
	})
	if a != 0 {
		t.Fatalf("%v allocations per frame", a)
	}
}
