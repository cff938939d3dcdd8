package hwsim

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"unsafe"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
)

var _ busdma.Platform = (*Memory)(nil)

// Barrier is the completion barrier busdma issues after cache maintenance:
// it drains the CPU's posted stores.
func (m *Memory) Barrier() { m.sys.Bus.Barrier() }

// Physical layout of the simulated bus address space. Allocated DMA memory
// is handed out bottom-up from allocBase; foreign buffers (caller memory
// loaded into a DMA map) are given slots from foreignBase.
const (
	allocBase   = 0x0100_0000
	foreignBase = 0x4000_0000
)

// ErrNoMemory is returned when a bus address or buffer is not known to the
// simulated memory.
var ErrNoMemory = errors.New("hwsim: no simulated memory there")

type regionKind uint8

const (
	coherentRegion regionKind = iota + 1
	cachedRegion
	foreignRegion
)

// memRegion is a range of simulated physical memory.
//
// Coherent (uncached) regions have one view, dev. Cached regions have the
// CPU's view cpu (the Go slice the driver reads and writes directly), the
// memory/device view dev, and snap: the CPU view as of the last moment the
// two were known to agree. A line whose cpu bytes differ from snap is dirty.
type memRegion struct {
	kind    regionKind
	name    string
	addr    uint64
	cpu     []byte
	dev     []byte
	snap    []byte
	written []bool // per line: the device wrote it since the last invalidate
	active  bool
	slotCap int // foreign slots: capacity of dev/snap backing
	devBack []byte
	snpBack []byte
	slot    uint64 // foreign slots: line-aligned base bus address
}

// Memory is the simulated physical memory with its cache model.
type Memory struct {
	sys     *System
	line    int
	next    uint64
	nextFor uint64
	regions []*memRegion // sorted by addr
	free    []*memRegion // released foreign slots

	Evictions uint64
}

func newMemory(s *System) *Memory {
	return &Memory{sys: s, line: s.cfg.LineSize, next: allocBase, nextFor: foreignBase}
}

// LineSize is the cache line size.
func (m *Memory) LineSize() int { return m.line }

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }

func (m *Memory) insert(r *memRegion) {
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].addr >= r.addr })
	m.regions = append(m.regions, nil)
	copy(m.regions[i+1:], m.regions[i:])
	m.regions[i] = r
}

func (m *Memory) alloc(name string, size, align int, kind regionKind) (*memRegion, error) {
	if size <= 0 {
		return nil, fmt.Errorf("hwsim: allocation %q of %d bytes", name, size)
	}
	if align < m.line {
		align = m.line
	}
	if align&(align-1) != 0 {
		return nil, fmt.Errorf("hwsim: allocation %q: alignment %d not a power of two", name, align)
	}
	addr := alignUp(m.next, uint64(align))
	n := int(alignUp(uint64(size), uint64(m.line)))
	if addr+uint64(n) > foreignBase {
		return nil, fmt.Errorf("hwsim: allocation %q: simulated memory exhausted", name)
	}
	m.next = addr + uint64(n)
	r := &memRegion{kind: kind, name: name, addr: addr, dev: make([]byte, n), active: true}
	if kind == cachedRegion {
		r.cpu = make([]byte, n)
		r.snap = make([]byte, n)
		r.written = make([]bool, n/m.line)
	}
	m.insert(r)
	return r, nil
}

// AllocCached returns size bytes of cacheable, physically contiguous DMA
// memory (line-aligned, a whole number of lines): the CPU's view and its
// bus address.
func (m *Memory) AllocCached(name string, size, align int) ([]byte, uint64, error) {
	m.sys.mu.Lock()
	defer m.sys.mu.Unlock()
	r, err := m.alloc(name, size, align, cachedRegion)
	if err != nil {
		return nil, 0, err
	}
	return r.cpu[:size:size], r.addr, nil
}

// Allocation reports the name of the AllocCached allocation whose CPU
// view holds all of buf, and false if buf lies elsewhere (the Go heap,
// say): tests use it to tell a driver's own DMA buffer from a copy.
func (m *Memory) Allocation(buf []byte) (string, bool) {
	if len(buf) == 0 {
		return "", false
	}
	m.sys.mu.Lock()
	defer m.sys.mu.Unlock()
	if r, _ := m.cpuRegion(buf); r != nil && r.kind == cachedRegion {
		return r.name, true
	}
	return "", false
}

// AllocCoherent returns size bytes of uncached DMA memory, accessed by the
// CPU through the returned Space (stores are posted on the Bus like
// register writes), and its bus address.
func (m *Memory) AllocCoherent(name string, size, align int, order barrier.Order) (barrier.Space, uint64, error) {
	m.sys.mu.Lock()
	defer m.sys.mu.Unlock()
	r, err := m.alloc(name, size, align, coherentRegion)
	if err != nil {
		return nil, 0, err
	}
	big := order == barrier.BigEndian || (order == barrier.Native && m.sys.cfg.BigEndianCPU)
	return &Coherent{mem: m, r: r, size: uint32(size), big: big}, r.addr, nil
}

func ptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// cpuRegion finds the cached or foreign region whose CPU view contains buf.
func (m *Memory) cpuRegion(buf []byte) (*memRegion, int) {
	p := ptrOf(buf)
	for _, r := range m.regions {
		if !r.active || r.cpu == nil || len(r.cpu) == 0 {
			continue
		}
		base := ptrOf(r.cpu)
		if p >= base && p+uintptr(len(buf)) <= base+uintptr(len(r.cpu)) {
			return r, int(p - base)
		}
	}
	return nil, 0
}

// Translate returns the bus address of buf. Memory from AllocCached
// translates to its own address; any other buffer is registered as foreign
// memory (its CPU view is buf itself) until Release. The whole buffer is
// contiguous.
func (m *Memory) Translate(buf []byte) (uint64, int, error) {
	if len(buf) == 0 {
		return 0, 0, fmt.Errorf("hwsim: translate of an empty buffer")
	}
	m.sys.mu.Lock()
	defer m.sys.mu.Unlock()
	if r, off := m.cpuRegion(buf); r != nil {
		return r.addr + uint64(off), len(buf), nil
	}
	r := m.foreignSlot(len(buf))
	off := int(ptrOf(buf) % uintptr(m.line))
	r.addr = r.slot + uint64(off)
	r.cpu = buf
	r.dev = r.devBack[off : off+len(buf)]
	r.snap = r.snpBack[off : off+len(buf)]
	// Memory holds what the CPU view holds now: the buffer was written
	// back at some time in the past as far as the model knows. Lines the
	// CPU changes from here on are dirty.
	copy(r.dev, buf)
	copy(r.snap, buf)
	for i := range r.written {
		r.written[i] = false
	}
	r.active = true
	m.insert(r)
	return r.addr, len(buf), nil
}

func (m *Memory) foreignSlot(n int) *memRegion {
	for i, r := range m.free {
		if r.slotCap >= n+m.line {
			m.free = append(m.free[:i], m.free[i+1:]...)
			return r
		}
	}
	c := int(alignUp(uint64(n), uint64(m.line))) + m.line
	if c < 2048 {
		c = 2048 + m.line
	}
	r := &memRegion{kind: foreignRegion, name: "foreign", slot: m.nextFor, slotCap: c,
		devBack: make([]byte, c), snpBack: make([]byte, c), written: make([]bool, c/m.line+1)}
	m.nextFor += uint64(c) + uint64(m.line)
	return r
}

// Release ends a foreign registration made by Translate. Releasing memory
// from AllocCached is a no-op.
func (m *Memory) Release(addr uint64) error {
	m.sys.mu.Lock()
	defer m.sys.mu.Unlock()
	r := m.find(addr, 1)
	if r == nil {
		return fmt.Errorf("%w: release of %#x", ErrNoMemory, addr)
	}
	if r.kind != foreignRegion {
		return nil
	}
	r.active = false
	r.cpu = nil
	for i, x := range m.regions {
		if x == r {
			m.regions = append(m.regions[:i], m.regions[i+1:]...)
			break
		}
	}
	m.free = append(m.free, r)
	return nil
}

// find returns the active region containing [addr, addr+n).
func (m *Memory) find(addr uint64, n int) *memRegion {
	i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].addr > addr }) - 1
	if i < 0 {
		return nil
	}
	r := m.regions[i]
	if !r.active || addr+uint64(n) > r.addr+uint64(len(r.dev)) {
		return nil
	}
	return r
}

// lines calls f for every cache line overlapping [off, off+n) of r, with
// the line's bounds clipped to the region, and whether the line extends
// past the region (shared with bytes the region does not own).
func (m *Memory) lines(r *memRegion, off, n int, f func(li, lo, hi int, partial bool)) {
	if n <= 0 {
		return
	}
	lsz := uint64(m.line)
	start := (r.addr + uint64(off)) &^ (lsz - 1)
	end := r.addr + uint64(off+n)
	for a := start; a < end; a += lsz {
		lo, hi := int(int64(a)-int64(r.addr)), int(int64(a+lsz)-int64(r.addr))
		partial := lo < 0 || hi > len(r.dev)
		if lo < 0 {
			lo = 0
		}
		if hi > len(r.dev) {
			hi = len(r.dev)
		}
		li := int((a - (r.addr &^ (lsz - 1))) / lsz)
		f(li, lo, hi, partial)
	}
}

// dirty reports whether the CPU changed bytes [lo,hi) since they were
// last known to agree with memory.
func dirty(r *memRegion, lo, hi int) bool { return !bytes.Equal(r.cpu[lo:hi], r.snap[lo:hi]) }

// Cache applies op to every line overlapping buf, which must lie in cached
// or translated memory. It is what a CACHE Hit_* loop does: whole lines.
func (m *Memory) Cache(op busdma.CacheOp, buf []byte) error {
	m.sys.mu.Lock()
	defer m.sys.mu.Unlock()
	r, off := m.cpuRegion(buf)
	if r == nil {
		return fmt.Errorf("%w: cache op on a buffer that is not DMA memory", ErrNoMemory)
	}
	m.sys.Sched.point()
	if m.bulkCache(op, r, off, len(buf)) {
		return nil
	}
	m.lines(r, off, len(buf), func(li, lo, hi int, partial bool) {
		if op&busdma.Writeback != 0 && dirty(r, lo, hi) {
			if r.written[li] {
				m.sys.Report(Misuse{Kind: WritebackOverDMA, Addr: r.addr + uint64(lo), Region: r.name,
					Detail: "writeback of a dirty line the device had written"})
			}
			copy(r.dev[lo:hi], r.cpu[lo:hi])
			copy(r.snap[lo:hi], r.cpu[lo:hi])
		}
		if op&busdma.Invalidate != 0 {
			if partial {
				m.sys.Report(Misuse{Kind: SharedLine, Addr: r.addr + uint64(lo), Region: r.name,
					Detail: "invalidate of a cache line that extends past the buffer"})
			}
			if r.written[li] && dirty(r, lo, hi) {
				m.sys.Report(Misuse{Kind: CPUWroteDeviceLine, Addr: r.addr + uint64(lo), Region: r.name,
					Detail: "CPU changed a line during DMA; its data is discarded"})
			}
			copy(r.cpu[lo:hi], r.dev[lo:hi])
			copy(r.snap[lo:hi], r.dev[lo:hi])
			r.written[li] = false
		}
	})
	return nil
}

// bulkCache performs op over [off, off+n) of r as two copies when no line
// can report a misuse: the device wrote none of the lines since they were
// last synced, and (for an invalidate) none extends past the region. It
// relies on the model's invariant that a line the device has not written
// holds in memory what the CPU last synced (dev == snap): writing back a
// clean such line changes nothing, and a dirty one is exactly cpu -> dev,
// so the per-line loop would do the same work byte for byte.
func (m *Memory) bulkCache(op busdma.CacheOp, r *memRegion, off, n int) bool {
	if n <= 0 {
		return true
	}
	lsz := uint64(m.line)
	base := r.addr &^ (lsz - 1)
	first := (r.addr + uint64(off)) &^ (lsz - 1)
	end := (r.addr + uint64(off+n) + lsz - 1) &^ (lsz - 1)
	if op&busdma.Invalidate != 0 && (first < r.addr || end > r.addr+uint64(len(r.dev))) {
		return false // a partial line: the per-line loop reports it
	}
	lo, hi := int(int64(first)-int64(r.addr)), int(int64(end)-int64(r.addr))
	lo, hi = max(lo, 0), min(hi, len(r.dev))
	l0, l1 := (first-base)/lsz, (end-base)/lsz
	for li := l0; li < l1; li++ {
		if r.written[li] {
			// Lines the device wrote (a received frame). Every misuse
			// the per-line loop could report needs a line the CPU
			// dirtied; if it dirtied none (one compare of the whole
			// range), a writeback has nothing to write and an
			// invalidate takes the device's bytes, in bulk.
			if dirty(r, lo, hi) {
				return false
			}
			if op&busdma.Invalidate != 0 {
				copy(r.cpu[lo:hi], r.dev[lo:hi])
				copy(r.snap[lo:hi], r.dev[lo:hi])
				clear(r.written[l0:l1])
			}
			return true
		}
	}
	if op&busdma.Writeback != 0 {
		copy(r.dev[lo:hi], r.cpu[lo:hi])
		copy(r.snap[lo:hi], r.cpu[lo:hi])
	}
	if op&busdma.Invalidate != 0 {
		copy(r.cpu[lo:hi], r.dev[lo:hi])
		copy(r.snap[lo:hi], r.dev[lo:hi])
	}
	return true
}

// evictOne writes back one dirty line chosen by the seed, as a real cache
// does when it needs the way for something else.
func (m *Memory) evictOne() {
	if len(m.regions) == 0 {
		return
	}
	r := m.regions[m.sys.Sched.Intn(len(m.regions))]
	if r.cpu == nil || len(r.dev) == 0 {
		return
	}
	off := m.sys.Sched.Intn(len(r.dev))
	m.lines(r, off, 1, func(li, lo, hi int, _ bool) {
		if !dirty(r, lo, hi) {
			return
		}
		m.Evictions++
		if r.written[li] {
			m.sys.Report(Misuse{Kind: WritebackOverDMA, Addr: r.addr + uint64(lo), Region: r.name,
				Detail: "eviction of a line the CPU dirtied during DMA overwrote device data"})
		}
		copy(r.dev[lo:hi], r.cpu[lo:hi])
		copy(r.snap[lo:hi], r.cpu[lo:hi])
	})
}

// DevRead copies memory at bus address addr into dst, as a DMA read does:
// it sees the device view only. Lock held (model side).
func (m *Memory) DevRead(addr uint64, dst []byte) error {
	r := m.find(addr, len(dst))
	if r == nil {
		m.sys.Report(Misuse{Kind: BadDMAAddress, Addr: addr, Detail: fmt.Sprintf("device read of %d bytes", len(dst))})
		return fmt.Errorf("%w: device read at %#x+%d", ErrNoMemory, addr, len(dst))
	}
	off := int(addr - r.addr)
	if r.cpu != nil {
		stale := false
		m.lines(r, off, len(dst), func(_, lo, hi int, _ bool) {
			if !stale && dirty(r, lo, hi) {
				stale = true
				m.sys.Report(Misuse{Kind: StaleDeviceRead, Addr: r.addr + uint64(lo), Region: r.name,
					Detail: "device read a line still dirty in the CPU cache"})
			}
		})
	}
	copy(dst, r.dev[off:])
	return nil
}

// DevWrite copies src to bus address addr, as a DMA write does: only the
// device view changes. Lock held (model side).
func (m *Memory) DevWrite(addr uint64, src []byte) error {
	r := m.find(addr, len(src))
	if r == nil {
		m.sys.Report(Misuse{Kind: BadDMAAddress, Addr: addr, Detail: fmt.Sprintf("device write of %d bytes", len(src))})
		return fmt.Errorf("%w: device write at %#x+%d", ErrNoMemory, addr, len(src))
	}
	off := int(addr - r.addr)
	if r.cpu != nil {
		m.lines(r, off, len(src), func(li, lo, hi int, partial bool) {
			if partial {
				m.sys.Report(Misuse{Kind: SharedLine, Addr: r.addr + uint64(lo), Region: r.name,
					Detail: "DMA write into a cache line that extends past the buffer"})
			}
			if dirty(r, lo, hi) {
				m.sys.Report(Misuse{Kind: CPUWroteDeviceLine, Addr: r.addr + uint64(lo), Region: r.name,
					Detail: "line dirty in the CPU cache while the device writes it"})
			}
			r.written[li] = true
		})
	}
	copy(r.dev[off:], src)
	return nil
}

// getWord and putWord read and write a 1-, 2- or 4-byte value in the given
// byte order. They call the concrete byte orders rather than going through
// binary.ByteOrder, whose interface call would move the caller's buffer to
// the heap on every access.
func getWord(b []byte, width int, big bool) uint32 {
	switch {
	case width == 1:
		return uint32(b[0])
	case width == 2 && big:
		return uint32(binary.BigEndian.Uint16(b))
	case width == 2:
		return uint32(binary.LittleEndian.Uint16(b))
	case big:
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func putWord(b []byte, width int, big bool, v uint32) {
	switch {
	case width == 1:
		b[0] = byte(v)
	case width == 2 && big:
		binary.BigEndian.PutUint16(b, uint16(v))
	case width == 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case big:
		binary.BigEndian.PutUint32(b, v)
	default:
		binary.LittleEndian.PutUint32(b, v)
	}
}

// DevLoad32 reads a 32-bit word at addr in the given byte order (device
// view). Lock held.
func (m *Memory) DevLoad32(addr uint64, order barrier.Order) (uint32, error) {
	var b [4]byte
	if err := m.DevRead(addr, b[:]); err != nil {
		return 0, err
	}
	return getWord(b[:], 4, m.big(order)), nil
}

// DevStore32 writes a 32-bit word at addr in the given byte order. Lock held.
func (m *Memory) DevStore32(addr uint64, v uint32, order barrier.Order) error {
	var b [4]byte
	putWord(b[:], 4, m.big(order), v)
	return m.DevWrite(addr, b[:])
}

func (m *Memory) big(o barrier.Order) bool {
	return o == barrier.BigEndian || (o == barrier.Native && m.sys.cfg.BigEndianCPU)
}

// storeNow applies a posted coherent-memory store.
func (m *Memory) storeNow(addr uint64, width int, v uint32, big bool) {
	r := m.find(addr, width)
	if r == nil {
		return // the Coherent accessor checked bounds when posting
	}
	putWord(r.dev[addr-r.addr:], width, big, v)
}

// Coherent is uncached DMA memory seen from the CPU; it implements
// barrier.Space. Stores are posted on the Bus's write buffer, so a device
// may see them late or out of order unless a Barrier intervenes, and every
// access is a scheduling point at which the device may run.
type Coherent struct {
	mem  *Memory
	r    *memRegion
	size uint32
	big  bool
}

var _ barrier.Space = (*Coherent)(nil)

func (c *Coherent) check(off, width uint32) {
	if off%width != 0 || off > c.size-width {
		panic(fmt.Sprintf("hwsim: %d-byte access at %#x outside or misaligned in coherent memory %q (size %#x)", width, off, c.r.name, c.size))
	}
}

// Addr is the memory's bus address.
func (c *Coherent) Addr() uint64 { return c.r.addr }

func (c *Coherent) load(off uint32, width int) uint32 {
	c.check(off, uint32(width))
	s := c.mem.sys
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Bus.maybeDrain()
	s.Sched.point()
	addr := c.r.addr + uint64(off)
	if v, ok := s.Bus.forward(addr, width); ok {
		return v
	}
	if s.Bus.overlapsPending(addr, width) {
		s.Bus.drainAll() // mixed-width overlap: resolve conservatively
	}
	return getWord(c.r.dev[off:], width, c.big)
}

func (c *Coherent) store(off uint32, width int, v uint32) {
	c.check(off, uint32(width))
	s := c.mem.sys
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Bus.post(pendingWrite{addr: c.r.addr + uint64(off), width: uint8(width), val: v, order: c.big})
	s.Sched.point()
}

func (c *Coherent) Read8(off uint32) uint8       { return uint8(c.load(off, 1)) }
func (c *Coherent) Read16(off uint32) uint16     { return uint16(c.load(off, 2)) }
func (c *Coherent) Read32(off uint32) uint32     { return c.load(off, 4) }
func (c *Coherent) Write8(off uint32, v uint8)   { c.store(off, 1, uint32(v)) }
func (c *Coherent) Write16(off uint32, v uint16) { c.store(off, 2, uint32(v)) }
func (c *Coherent) Write32(off uint32, v uint32) { c.store(off, 4, v) }
func (c *Coherent) Barrier()                     { c.mem.sys.Bus.Barrier() }
