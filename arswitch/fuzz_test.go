package arswitch

import (
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzDecodeATU16: AR8216-family address-table results come from the chip;
// any register contents must decode or fail cleanly, and a decoded entry
// must re-encode to the same registers.
func FuzzDecodeATU16(f *testing.F) {
	f.Add(uint32(0x01020000), uint32(0x02000000), uint32(0x00070002), uint8(6))
	f.Add(uint32(0), uint32(0), uint32(0), uint8(6))
	f.Add(uint32(0xffffffff), uint32(0xffffffff), uint32(0xffffffff), uint8(6))
	f.Add(uint32(0), uint32(0), uint32(0x000f0020), uint8(5))
	f.Fuzz(func(t *testing.T, atu, data, ctrl2 uint32, nports uint8) {
		n := int(nports%7) + 1
		e, ok, err := decodeATU16(atu, data, ctrl2, n)
		if err != nil {
			if !errors.Is(err, ErrBadEntry) || ok {
				t.Fatalf("err %v ok %v", err, ok)
			}
			return
		}
		if !ok {
			if ctrl2>>16&0xf != 0 {
				t.Fatal("end of table with nonzero status")
			}
			return
		}
		if uint32(e.Ports)>>n != 0 {
			t.Fatalf("ports %v beyond %d", e.Ports, n)
		}
		m := e.MAC
		if d := uint32(m[0])<<24 | uint32(m[1])<<16 | uint32(m[2])<<8 | uint32(m[3]); d != data {
			t.Fatalf("MAC bytes 0-3 %#x != %#x", d, data)
		}
		if a := uint32(m[4])<<24 | uint32(m[5])<<16; a != atu&0xffff0000 {
			t.Fatalf("MAC bytes 4-5 %#x != %#x", a, atu&0xffff0000)
		}
		if e.Static != (ctrl2>>16&0xf == 0xf) || (!e.Static && (e.Age < 1 || e.Age > 7)) {
			t.Fatalf("status %#x → %+v", ctrl2>>16&0xf, e)
		}
	})
}

// FuzzDecodeATU27: the same for the AR8327's three data registers.
func FuzzDecodeATU27(f *testing.F) {
	f.Add(uint32(0x03040506), uint32(0x00020102), uint32(0x00000107))
	f.Add(uint32(0), uint32(0), uint32(0))
	f.Add(uint32(0xffffffff), uint32(0xffffffff), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, d0, d1, d2 uint32) {
		e, ok, err := decodeATU27(d0, d1, d2)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if d2&0xf != 0 {
				t.Fatal("end of table with nonzero status")
			}
			return
		}
		m := e.MAC
		if uint32(m[2])<<24|uint32(m[3])<<16|uint32(m[4])<<8|uint32(m[5]) != d0 ||
			uint32(m[0])<<8|uint32(m[1]) != d1&0xffff {
			t.Fatalf("MAC %x from %#x %#x", m, d0, d1)
		}
		if e.VID != int(d2>>8&0xfff) || e.Ports>>7 != 0 {
			t.Fatalf("entry %+v from %#x", e, d2)
		}
	})
}

// FuzzParseMIB: MIB blocks of any length and content.
func FuzzParseMIB(f *testing.F) {
	f.Add(make([]byte, 0xa0), uint8(0))
	f.Add(make([]byte, 0xb0), uint8(2))
	f.Add([]byte{1, 2, 3}, uint8(1))
	f.Fuzz(func(t *testing.T, raw []byte, which uint8) {
		l := []*mibLayout{mibLayout8216, mibLayout8236, mibLayout8327}[int(which)%3]
		words := make([]uint32, len(raw)/4)
		for i := range words {
			words[i] = binary.LittleEndian.Uint32(raw[4*i:])
		}
		c, err := parseMIB(l, words)
		if len(words)*4 < l.size {
			if !errors.Is(err, ErrShortMIB) {
				t.Fatalf("short block: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range l.fields {
			if !c.Has(fl.c) {
				t.Fatalf("%v missing", fl.c)
			}
			if uint32(c.Val[fl.c]) != words[fl.off/4] {
				t.Fatalf("%v low word", fl.c)
			}
		}
	})
}

// FuzzPortStatus: any status word decodes to a consistent status.
func FuzzPortStatus(f *testing.F) {
	f.Add(uint32(0x1ff))
	f.Add(uint32(0x203))
	f.Fuzz(func(t *testing.T, v uint32) {
		st := decodePortStatus(v)
		switch st.SpeedMbps {
		case 0, 10, 100, 1000:
		default:
			t.Fatalf("speed %d", st.SpeedMbps)
		}
		if st.Link != (v&portStatusLinkUp != 0) {
			t.Fatal("link bit")
		}
	})
}

// FuzzDecodeVTU: VTU read-back from either layout.
func FuzzDecodeVTU(f *testing.F) {
	f.Add(uint32(0x00010005), uint32(0x80f), uint32(0x0))
	f.Add(uint32(0x0fff0005), uint32(0xfff), uint32(0x1fffff0))
	f.Add(uint32(0), uint32(0), uint32(0x100000))
	f.Fuzz(func(t *testing.T, a, b, c uint32) {
		if e, ok, err := decodeVTU16(a, b, 6); err == nil && ok {
			if e.vid < 1 || e.vid > maxVID || e.members>>6 != 0 {
				t.Fatalf("AR8216 entry %+v", e)
			}
		} else if err != nil && ok {
			t.Fatal("error with ok")
		}
		if e, ok, err := decodeVTU27(a, c); err == nil && ok {
			if e.vid < 1 || e.vid > maxVID || e.members>>7 != 0 || e.untagged&^e.members != 0 {
				t.Fatalf("AR8327 entry %+v", e)
			}
		}
	})
}
