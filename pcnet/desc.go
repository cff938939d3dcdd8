package pcnet

import (
	"sync/atomic"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
)

// descRing is a descriptor ring's coherent memory. Where the platform
// maps it straight into the program (busdma.CoherentWords: mipsdma's
// uncached alias), the driver reads and writes its words itself, with
// sync/atomic (one access each, never merged or dropped), swapping the
// bytes on a big-endian CPU (the chip's layout is little-endian);
// elsewhere (hwsim, whose Space models posted writes and checks their
// order) through the Space. Either way the barriers are the same calls
// at the same places. The ring is touched eight times per forwarded
// frame (RX status and count, RX address and status, TX address and
// status, TX completion), and a Space access costs an interface call, a
// bounds check and the access's own call: on a little-endian CPU the
// words save about 250 instructions per NATed frame (natbench). The
// accessors are inlined on the hot paths only by the profile-guided
// build (internal/image; too costly for the plain inliner): a call made
// each big-endian access cost about 40 instructions, 100 per NATed frame,
// and a constant's swap folds away once inlined.
type descRing struct {
	s barrier.Space
	// w is s's memory as words, if the platform maps it (nil: use s).
	w []uint32
	// direct: w is set and in the CPU's byte order, so an access is
	// one atomic load or store, inlined (a little-endian CPU).
	direct bool
	swap   bool // w's words are byte-swapped from the CPU's order
}

func newDescRing(s barrier.Space) descRing {
	d := descRing{s: s}
	if cw, ok := s.(busdma.CoherentWords); ok {
		d.w, d.swap = cw.Words()
		d.direct = !d.swap
	}
	return d
}

// read32 returns the little-endian word at byte offset off. Inlined
// (the Space's call is outlined), so with a constant mask a caller's test
// of the result costs a load and, on a big-endian CPU, the swap.
func (d *descRing) read32(off uint32) uint32 {
	if d.w == nil {
		return d.spaceRead32(off)
	}
	v := atomic.LoadUint32(&d.w[off/4])
	if d.swap {
		v = swap32(v)
	}
	return v
}

// write32 stores v as the little-endian word at byte offset off.
// Inlined: the swap of a constant v folds away.
func (d *descRing) write32(off, v uint32) {
	if d.w == nil {
		d.spaceWrite32(off, v)
		return
	}
	if d.swap {
		v = swap32(v)
	}
	atomic.StoreUint32(&d.w[off/4], v)
}

// status returns the status half (bits 31:16) of the little-endian
// word at off, a descriptor's control word: on a big-endian CPU two
// bytes swapped, not four (about 8 instructions less than read32's
// swap, for the three status reads of a forwarded frame).
func (d *descRing) status(off uint32) uint16 {
	if d.w == nil {
		return uint16(d.spaceRead32(off) >> 16)
	}
	v := atomic.LoadUint32(&d.w[off/4])
	if d.swap { // memory bytes b0..b3 loaded as b0<<24|b1<<16|b2<<8|b3
		return uint16(v<<8) | uint16(v>>8)&0xff
	}
	return uint16(v >> 16)
}

// low12 returns bits 11:0 of the little-endian word at off (a receive
// descriptor's message count), as status does its half.
func (d *descRing) low12(off uint32) uint32 {
	if d.w == nil {
		return d.spaceRead32(off) & 0xfff
	}
	v := atomic.LoadUint32(&d.w[off/4])
	if d.swap {
		return v>>24 | v>>8&0xf00
	}
	return v & 0xfff
}

// enc returns v as write32 stores it, for a value the driver encodes
// once and writes many times with writeEnc (a buffer's address).
func (d *descRing) enc(v uint32) uint32 {
	if d.swap {
		return swap32(v)
	}
	return v
}

// writeEnc stores e, a value enc returned, at off: write32 without the
// swap.
func (d *descRing) writeEnc(off, e uint32) {
	if d.w == nil {
		d.spaceWrite32(off, e) // enc is the identity there
		return
	}
	atomic.StoreUint32(&d.w[off/4], e)
}

// spaceRead32 is read32 through the Space (hwsim).
func (d *descRing) spaceRead32(off uint32) uint32 { return d.s.Read32(off) }

// spaceWrite32 is write32 through the Space (hwsim).
func (d *descRing) spaceWrite32(off, v uint32) { d.s.Write32(off, v) }

// swap32 reverses a word's bytes.
func swap32(v uint32) uint32 { return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24 }

// barrier completes the accesses before it before any after it: the
// Space's Barrier, or on a platform that maps the memory (where that is
// what the Space's Barrier does) barrier.Full, without the interface
// call.
func (d *descRing) barrier() {
	if d.w == nil {
		d.s.Barrier()
		return
	}
	barrier.Full()
}
