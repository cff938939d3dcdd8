package barrier_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/barrier"
)

func TestMMIOByteOrder(t *testing.T) {
	for _, order := range []barrier.Order{barrier.BigEndian, barrier.LittleEndian, barrier.Native} {
		mem := make([]uint32, 4)
		s, err := barrier.NewMMIOBuffer("r", mem, order)
		if err != nil {
			t.Fatal(err)
		}
		s.Write32(4, 0x11223344)
		s.Write16(8, 0xaabb)
		s.Write8(12, 0x5a)
		raw := make([]byte, 4)
		binary.NativeEndian.PutUint32(raw, mem[1])
		var want binary.ByteOrder = binary.NativeEndian
		switch order {
		case barrier.BigEndian:
			want = binary.BigEndian
		case barrier.LittleEndian:
			want = binary.LittleEndian
		}
		if got := want.Uint32(raw); got != 0x11223344 {
			t.Errorf("%v: register bytes %x decode to %#x", order, raw, got)
		}
		if s.Read32(4) != 0x11223344 || s.Read16(8) != 0xaabb || s.Read8(12) != 0x5a {
			t.Errorf("%v: read back %#x %#x %#x", order, s.Read32(4), s.Read16(8), s.Read8(12))
		}
		s.Barrier()
	}
}

func TestMMIOBadAccessPanicsWithName(t *testing.T) {
	s, _ := barrier.NewMMIOBuffer("uart", make([]uint32, 2), barrier.Native)
	for _, f := range []func(){
		func() { s.Read32(8) }, func() { s.Write32(2, 0) }, func() { s.Read16(7) },
		func() { s.Read32(6) }, func() { s.Write32(8, 0) }, func() { s.Write32(0xfffffffc, 0) },
		func() { s.Read16(8) }, func() { s.Write16(3, 0) }, func() { s.Write16(8, 0) },
		func() { s.Read8(8) }, func() { s.Write8(8, 0) }, func() { s.Read8(0xffffffff) },
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), `"uart"`) {
					t.Errorf("bad access: panic %v, want one naming the region", r)
				}
			}()
			f()
		}()
	}
}

// The last register of each width is inside the region.
func TestMMIOLastRegister(t *testing.T) {
	s, _ := barrier.NewMMIOBuffer("r", make([]uint32, 2), barrier.Native)
	s.Write32(4, 1)
	s.Write16(6, 2)
	s.Write8(7, 3)
	if s.Read32(4) == 0 || s.Read16(6) == 0 || s.Read8(7) != 3 {
		t.Fatal("last registers not accessible")
	}
}

func TestNewMMIOErrors(t *testing.T) {
	if _, err := barrier.NewMMIO("x", 0xb8000000, 2, barrier.Native); err == nil {
		t.Error("region below 4 bytes accepted")
	}
	if _, err := barrier.NewMMIO("x", 0, 16, barrier.Native); err == nil {
		t.Error("zero base accepted")
	}
	if _, err := barrier.NewMMIO("x", 0xb8000002, 16, barrier.Native); err == nil {
		t.Error("misaligned base accepted")
	}
	if _, err := barrier.NewMMIOBuffer("x", nil, barrier.Native); err == nil {
		t.Error("empty buffer accepted")
	}
}

func TestFencesRun(t *testing.T) {
	barrier.Full()
	barrier.Read()
	barrier.Write()
	barrier.Hazard()
}
