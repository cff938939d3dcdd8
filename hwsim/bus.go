package hwsim

import (
	"fmt"

	"github.com/gowrt/gowrt/barrier"
)

// Device is a register-level device model mapped on the Bus. ReadReg and
// WriteReg run with the System lock held; width is 1, 2 or 4 and off is
// aligned to it.
type Device interface {
	ReadReg(off uint32, width int) uint32
	WriteReg(off uint32, width int, val uint32)
}

// writeBufSize is the depth of the simulated CPU write buffer: the number of
// posted stores that may be outstanding before the oldest is forced out.
const writeBufSize = 8

type pendingWrite struct {
	region *Region // nil for a coherent-memory store
	addr   uint64  // register offset, or bus address for memory
	width  uint8
	val    uint32
	order  bool // memory stores: region byte order is big-endian
}

// Bus is the simulated CPU's path to device registers and uncached memory.
// Stores are posted: they wait in a write buffer and reach their target
// later, possibly after stores issued after them (to other addresses) and
// after later loads. A Barrier drains the buffer in order. Loads of an
// address drain earlier stores to that same address first, as CPUs do.
type Bus struct {
	sys     *System
	pending [writeBufSize]pendingWrite
	n       int
	epoch   uint32 // incremented by every Barrier

	Posted, Reordered, StaleReads uint64 // hazard counters
}

func newBus(s *System) *Bus { return &Bus{sys: s, epoch: 1} }

// Region is a device's registers on the Bus; it implements barrier.Space.
type Region struct {
	bus  *Bus
	name string
	size uint32
	dev  Device
	// Per 32-bit word: the value the last read returned and the barrier
	// epoch it was read in, for stale re-reads.
	last      []uint32
	lastEpoch []uint32
}

var _ barrier.Space = (*Region)(nil)

// Map puts dev's registers on the bus as a region of size bytes.
func (b *Bus) Map(name string, size uint32, dev Device) *Region {
	if size == 0 || size%4 != 0 {
		panic(fmt.Sprintf("hwsim: region %q size %#x not a positive multiple of 4", name, size))
	}
	return &Region{bus: b, name: name, size: size, dev: dev,
		last: make([]uint32, size/4), lastEpoch: make([]uint32, size/4)}
}

// Name returns the region's name.
func (r *Region) Name() string { return r.name }

func (r *Region) check(off uint32, width uint32) {
	if off%width != 0 || off > r.size-width {
		panic(fmt.Sprintf("hwsim: %d-byte access at %#x outside or misaligned in region %q (size %#x)", width, off, r.name, r.size))
	}
}

func (r *Region) read(off uint32, width int) uint32 {
	r.check(off, uint32(width))
	s := r.bus.sys
	s.mu.Lock()
	defer s.mu.Unlock()
	b := r.bus
	b.drainMatching(r, uint64(off))
	b.maybeDrain()
	s.Sched.point()
	w := off / 4
	if width == 4 && !s.cfg.NoStaleReads && r.lastEpoch[w] == b.epoch && s.Sched.Chance(128) {
		// No barrier since this register was last read: the read is
		// satisfied by the previous value (the AR934x MDIO symptom).
		b.StaleReads++
		return r.last[w]
	}
	v := r.dev.ReadReg(off, width)
	if width == 4 {
		r.last[w] = v
		r.lastEpoch[w] = b.epoch
	}
	return v
}

func (r *Region) write(off uint32, width int, v uint32) {
	r.check(off, uint32(width))
	s := r.bus.sys
	s.mu.Lock()
	defer s.mu.Unlock()
	r.lastEpoch[off/4] = 0 // a write invalidates the stale-read latch
	r.bus.post(pendingWrite{region: r, addr: uint64(off), width: uint8(width), val: v})
	s.Sched.point()
}

func (r *Region) Read8(off uint32) uint8               { return uint8(r.read(off, 1)) }
func (r *Region) Read16(off uint32) uint16             { return uint16(r.read(off, 2)) }
func (r *Region) Read32(off uint32) uint32             { return r.read(off, 4) }
func (r *Region) Write8(off uint32, v uint8)           { r.write(off, 1, uint32(v)) }
func (r *Region) Write16(off uint32, v uint16)         { r.write(off, 2, uint32(v)) }
func (r *Region) Write32(off uint32, v uint32)         { r.write(off, 4, v) }
func (r *Region) Barrier()                             { r.bus.Barrier() }
func (r *Region) String() string                       { return "hwsim region " + r.name }
func (r *Region) poke(off uint64, width int, v uint32) { r.dev.WriteReg(uint32(off), width, v) }

// Barrier drains the write buffer in program order and starts a new epoch,
// so that the next read of every register goes to the device.
func (b *Bus) Barrier() {
	b.sys.mu.Lock()
	defer b.sys.mu.Unlock()
	b.drainAll()
	b.epoch++
	b.sys.Sched.point()
}

func (b *Bus) post(w pendingWrite) {
	if b.sys.cfg.NoPostedWrites {
		b.apply(w)
		return
	}
	if b.n == writeBufSize {
		b.applyAt(0)
	}
	b.pending[b.n] = w
	b.n++
	b.Posted++
	b.maybeDrain()
}

// maybeDrain lets one posted store reach its target, chosen by the seed
// among those with no older store to the same address: stores to different
// addresses may overtake each other.
func (b *Bus) maybeDrain() {
	if b.n == 0 || !b.sys.Sched.Chance(64) {
		return
	}
	i := b.sys.Sched.Intn(b.n)
	for j := 0; j < i; j++ {
		if b.pending[j].region == b.pending[i].region && b.pending[j].addr == b.pending[i].addr {
			i = j
			break
		}
	}
	if i != 0 {
		b.Reordered++
	}
	b.applyAt(i)
}

func (b *Bus) drainAll() {
	for b.n > 0 {
		b.applyAt(0)
	}
}

// drainMatching applies, in order, every pending store to the given target.
func (b *Bus) drainMatching(r *Region, addr uint64) {
	for i := 0; i < b.n; {
		if b.pending[i].region == r && b.pending[i].addr == addr {
			b.applyAt(i)
			continue
		}
		i++
	}
}

func (b *Bus) applyAt(i int) {
	w := b.pending[i]
	copy(b.pending[i:b.n], b.pending[i+1:b.n])
	b.n--
	b.apply(w)
}

func (b *Bus) apply(w pendingWrite) {
	if w.region != nil {
		w.region.poke(w.addr, int(w.width), w.val)
		return
	}
	b.sys.Mem.storeNow(w.addr, int(w.width), w.val, w.order)
}

// forward returns the newest pending memory store to addr (CPU store-to-load
// forwarding), if any.
func (b *Bus) forward(addr uint64, width int) (uint32, bool) {
	for i := b.n - 1; i >= 0; i-- {
		p := b.pending[i]
		if p.region == nil && p.addr == addr && int(p.width) == width {
			return p.val, true
		}
	}
	return 0, false
}

// overlapsPending reports whether a pending memory store touches [addr,addr+n).
func (b *Bus) overlapsPending(addr uint64, n int) bool {
	for i := 0; i < b.n; i++ {
		p := b.pending[i]
		if p.region == nil && p.addr < addr+uint64(n) && addr < p.addr+uint64(p.width) {
			return true
		}
	}
	return false
}
