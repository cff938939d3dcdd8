package usb

import (
	"errors"
	"testing"
)

// cdcECMConfig is a CDC-ECM configuration written out by hand from USB
// 2.0 §9.6 and CDC 1.2 / ECM 1.2 (communication interface with header,
// union and Ethernet functional descriptors, an interrupt endpoint; data
// interface with an empty alternate setting 0 and a bulk pair in 1).
var cdcECMConfig = []byte{
	9, 2, 80, 0, 2, 1, 0, 0xc0, 50, // config: wTotalLength 80, 2 interfaces
	9, 4, 0, 0, 1, 2, 6, 0, 0, // iface 0: CDC comm, ECM subclass 6, 1 endpoint
	5, 0x24, 0x00, 0x20, 0x01, // header functional, bcdCDC 1.20
	5, 0x24, 0x06, 0, 1, // union: master 0, slave 1
	13, 0x24, 0x0f, 3, 0, 0, 0, 0, 0xea, 0x05, 0, 0, 0, // Ethernet: iMACAddress 3, wMaxSegmentSize 1514
	7, 5, 0x81, 3, 16, 0, 32, // interrupt IN 1, 16 bytes, interval 32
	9, 4, 1, 0, 0, 10, 0, 0, 0, // iface 1 alt 0: data, no endpoints
	9, 4, 1, 1, 2, 10, 0, 0, 0, // iface 1 alt 1: two endpoints
	7, 5, 0x82, 2, 64, 0, 0, // bulk IN 2
	7, 5, 0x03, 2, 64, 0, 0, // bulk OUT 3
}

func TestParseConfigCDCECM(t *testing.T) {
	c, err := ParseConfigDescriptor(cdcECMConfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.Value != 1 || c.NumInterfaces != 2 || c.Attributes != 0xc0 || c.MaxPower != 50 || len(c.Interfaces) != 3 {
		t.Fatalf("config %+v", c)
	}
	comm := c.Interface(0, 0)
	if comm == nil || comm.Class != 2 || comm.SubClass != 6 || len(comm.Extra) != 3 || len(comm.Endpoints) != 1 {
		t.Fatalf("comm %+v", comm)
	}
	if eth := comm.Extra[2]; len(eth) != 13 || eth[2] != 0x0f || eth[3] != 3 {
		t.Fatalf("ethernet functional descriptor % x", eth)
	}
	if e := comm.Endpoints[0]; e.Type() != Interrupt || !e.In() || e.MaxPacketSize() != 16 || e.Interval != 32 {
		t.Fatalf("notify endpoint %+v", e)
	}
	data := c.Interface(1, 1)
	in, ok1 := data.Endpoint(Bulk, true)
	out, ok2 := data.Endpoint(Bulk, false)
	if !ok1 || !ok2 || in.Address != 0x82 || out.Address != 0x03 || out.MaxPacketSize() != 64 {
		t.Fatalf("data %+v", data)
	}
	if alt0 := c.Interface(1, 0); alt0 == nil || len(alt0.Endpoints) != 0 {
		t.Fatalf("data alt 0 %+v", alt0)
	}
}

func TestParseConfigRejects(t *testing.T) {
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), cdcECMConfig...))
	}
	cases := map[string][]byte{
		"short":                 cdcECMConfig[:8],
		"total beyond arrived":  cdcECMConfig[:79],
		"total below 9":         mod(func(b []byte) []byte { b[2] = 8; return b }),
		"zero bLength":          mod(func(b []byte) []byte { b[18] = 0; return b }),
		"one bLength":           mod(func(b []byte) []byte { b[18] = 1; return b }),
		"bLength past the end":  mod(func(b []byte) []byte { b[73] = 9; return b }),
		"short endpoint":        mod(func(b []byte) []byte { b[73] = 6; b[2] = 79; return b[:79] }),
		"endpoint number 0":     mod(func(b []byte) []byte { b[75] = 0x80; return b }),
		"too many endpoints":    mod(func(b []byte) []byte { b[13] = 0; return b }),
		"too few endpoints":     mod(func(b []byte) []byte { b[13] = 2; return b }),
		"device inside":         mod(func(b []byte) []byte { b[19] = DescDevice; return b }),
		"stray byte":            mod(func(b []byte) []byte { b[2] = 81; return append(b, 0) }),
		"endpoint before iface": {9, 2, 16, 0, 0, 1, 0, 0x80, 0, 7, 5, 0x81, 2, 64, 0, 0},
		"wrong type":            mod(func(b []byte) []byte { b[1] = DescDevice; return b }),
	}
	for name, b := range cases {
		if _, err := ParseConfigDescriptor(b); !errors.Is(err, ErrDescriptor) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// Bytes beyond wTotalLength are not the configuration.
	if _, err := ParseConfigDescriptor(append(append([]byte(nil), cdcECMConfig...), 0, 0, 0)); err != nil {
		t.Errorf("trailing bytes: %v", err)
	}
}

func TestParseDeviceDescriptor(t *testing.T) {
	// An AX88179's descriptor as USB 2.0 Table 9-8 lays it out.
	b := []byte{18, 1, 0x10, 0x02, 0xff, 0xff, 0, 64, 0x95, 0x0b, 0x90, 0x17, 0x00, 0x01, 1, 2, 3, 1}
	d, err := ParseDeviceDescriptor(b)
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceDescriptor{USB: 0x0210, Class: 0xff, SubClass: 0xff, MaxPacket0: 64, Vendor: 0x0b95,
		Product: 0x1790, Release: 0x0100, Manufacturer: 1, ProductName: 2, Serial: 3, NumConfigs: 1}
	if d != want {
		t.Fatalf("got %+v", d)
	}
	if d8, err := ParseDeviceDescriptor(b[:8]); err != nil || d8.MaxPacket0 != 64 || d8.Vendor != 0 {
		t.Fatalf("8 bytes: %+v %v", d8, err)
	}
	for _, bad := range [][]byte{b[:7], b[:12], {18, 2, 0, 2, 0, 0, 0, 64}, {17, 1, 0, 2, 0, 0, 0, 64}} {
		if _, err := ParseDeviceDescriptor(bad); !errors.Is(err, ErrDescriptor) {
			t.Errorf("% x: %v", bad, err)
		}
	}
}

func TestParseString(t *testing.T) {
	s, err := ParseString([]byte{10, 3, 'g', 0, 'o', 0, 0x3d, 0xd8, 0x00, 0xde}) // "go😀"
	if err != nil || s != "go\U0001F600" {
		t.Fatalf("%q %v", s, err)
	}
	for _, bad := range [][]byte{{}, {3, 3, 'a'}, {4, 3, 'a'}, {4, 2, 'a', 0}, {4, 3, 0x3d, 0xd8}, {4, 3, 0x00, 0xde}, {6, 3, 0x3d, 0xd8, 'a', 0}} {
		if _, err := ParseString(bad); !errors.Is(err, ErrDescriptor) {
			t.Errorf("% x: %v", bad, err)
		}
	}
	ids, err := ParseLangIDs([]byte{4, 3, 0x09, 0x04})
	if err != nil || len(ids) != 1 || ids[0] != LangEnglishUS {
		t.Fatalf("%v %v", ids, err)
	}
	if _, err := ParseLangIDs([]byte{2, 3}); err == nil {
		t.Fatal("empty LANGID list accepted")
	}
}

func FuzzParseConfigDescriptor(f *testing.F) {
	f.Add(cdcECMConfig)
	f.Add(cdcECMConfig[:40])
	f.Add([]byte{9, 2, 9, 0, 0, 1, 0, 0x80, 0})
	f.Add([]byte{9, 2, 11, 0, 0, 1, 0, 0x80, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfigDescriptor(b)
		if err != nil {
			return
		}
		// Everything parsed lies inside what arrived.
		total := 0
		for _, x := range c.Extra {
			total += len(x)
		}
		for _, it := range c.Interfaces {
			total += InterfaceDescLen
			for _, x := range it.Extra {
				total += len(x)
			}
			for _, e := range it.Endpoints {
				total += EndpointDescLen
				for _, x := range e.Extra {
					total += len(x)
				}
			}
		}
		if total > len(b) || len(c.Interfaces) > maxAltSettings {
			t.Fatalf("parsed %d bytes of %d", total, len(b))
		}
	})
}

func FuzzParseDeviceDescriptor(f *testing.F) {
	f.Add([]byte{18, 1, 0x10, 0x02, 0xff, 0xff, 0, 64, 0x95, 0x0b, 0x90, 0x17, 0x00, 0x01, 1, 2, 3, 1})
	f.Add([]byte{18, 1, 0, 2, 0, 0, 0, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseDeviceDescriptor(b)
	})
}

func FuzzParseString(f *testing.F) {
	f.Add([]byte{10, 3, 'g', 0, 'o', 0, 0x3d, 0xd8, 0x00, 0xde})
	f.Add([]byte{4, 3, 0x09, 0x04})
	f.Add([]byte{255, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseString(b)
		if err == nil && len(s) > 3*len(b) {
			t.Fatalf("%d-byte string from %d bytes", len(s), len(b))
		}
		ParseLangIDs(b)
	})
}
