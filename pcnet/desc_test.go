package pcnet

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/gowrt/gowrt/barrier"
)

// wordSpace is little-endian coherent memory that also offers its words
// (busdma.CoherentWords), as mipsdma's does; barriers are counted.
type wordSpace struct {
	w        []uint32
	barriers int
}

func (s *wordSpace) bytes() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&s.w[0])), 4*len(s.w))
}
func (s *wordSpace) Read8(off uint32) uint8       { return s.bytes()[off] }
func (s *wordSpace) Read16(off uint32) uint16     { return binary.LittleEndian.Uint16(s.bytes()[off:]) }
func (s *wordSpace) Read32(off uint32) uint32     { return binary.LittleEndian.Uint32(s.bytes()[off:]) }
func (s *wordSpace) Write8(off uint32, v uint8)   { s.bytes()[off] = v }
func (s *wordSpace) Write16(off uint32, v uint16) { binary.LittleEndian.PutUint16(s.bytes()[off:], v) }
func (s *wordSpace) Write32(off uint32, v uint32) { binary.LittleEndian.PutUint32(s.bytes()[off:], v) }
func (s *wordSpace) Barrier()                     { s.barriers++ }
func (s *wordSpace) Words() (w []uint32, swap bool) {
	return s.w, binary.NativeEndian.Uint16([]byte{0, 1}) == 1
}

// spaceOnly hides Words: a Space like hwsim's.
type spaceOnly struct{ barrier.Space }

// TestDescRingWords: a descriptor word written through the memory's
// words lands in the chip's little-endian layout and reads back, on
// either CPU byte order (run it on qemu-mips too), the same as through
// the Space; without Words the ring goes through the Space, barriers
// included.
func TestDescRingWords(t *testing.T) {
	s := &wordSpace{w: make([]uint32, 8)}
	d := newDescRing(s)
	if d.w == nil {
		t.Fatal("the memory's words are not used")
	}
	d.write32(dCtl, 0x8000f9fa)
	if got := s.bytes()[dCtl : dCtl+4]; string(got) != "\xfa\xf9\x00\x80" {
		t.Fatalf("word stored as % x, want the little-endian layout", got)
	}
	s.Write32(dMisc, 0x000005ee)
	if v := d.read32(dMisc); v != 0x5ee {
		t.Fatalf("read %#x through the words, %#x through the Space", v, 0x5ee)
	}
	checkDecoders(t, "words", d, s)
	d.barrier()
	if s.barriers != 0 {
		t.Fatal("the words' barrier went through the Space")
	}

	o := &wordSpace{w: make([]uint32, 8)}
	d = newDescRing(spaceOnly{o})
	if d.w != nil {
		t.Fatal("words of a Space that does not offer them")
	}
	d.write32(dAddr, 0x01020304)
	if v := o.Read32(dAddr); v != 0x01020304 || d.read32(dAddr) != v {
		t.Fatalf("through the Space: %#x", v)
	}
	checkDecoders(t, "space", d, o)
	o.barriers = 0
	d.barrier()
	if o.barriers != 1 {
		t.Fatalf("%d Space barriers, want 1", o.barriers)
	}
}

// checkDecoders: status and low12 read a control word's halves as the
// chip laid it out (written through the Space, little-endian), and an
// encoded address written with writeEnc reads back through the Space.
func checkDecoders(t *testing.T, name string, d descRing, s *wordSpace) {
	t.Helper()
	s.Write32(dCtl, 0x8b4005ee)
	if st, m := d.status(dCtl), d.low12(dCtl); st != 0x8b40 || m != 0x5ee {
		t.Fatalf("%s: status %#x, low 12 bits %#x of 0x8b4005ee", name, st, m)
	}
	d.writeEnc(dAddr, d.enc(0x01020304))
	if v := s.Read32(dAddr); v != 0x01020304 {
		t.Fatalf("%s: encoded address reads %#x through the Space", name, v)
	}
}
