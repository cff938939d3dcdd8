package busdma

import (
	"fmt"
	"unsafe"
)

// bounceRec is one client fragment copied through the bounce buffer.
type bounceRec struct {
	client []byte
	off    int // offset in the bounce buffer
}

// Map is one buffer's mapping. A map is loaded, synced and unloaded by one
// goroutine at a time (drivers own their maps); it allocates nothing after
// NewMap.
type Map struct {
	tag    *Tag
	loaded bool
	single bool // loaded as one segment, not bounced: Sync's fast path
	dir    Dir

	segs   []Segment // bus view, cap MaxSegments
	segCPU [][]byte  // CPU view of each segment, for cache maintenance

	bounce     []byte // borrowed from the tag while loaded
	bounceAddr uint64
	bounceUsed int
	recs       []bounceRec // made on the first bounce (cap maxFrags)
	// xlated holds the translated client addresses to release. Most maps
	// (a driver's ring buffers) translate one address per load, so it
	// starts in xlated1 and grows to maxXlated only for a map that needs
	// it: a ring of hundreds of maps then costs a few KiB, not one KiB
	// per map.
	xlated  []uint64
	xlated1 [1]uint64

	// Bounced counts loads that needed the bounce buffer.
	Bounced uint64
}

// maxFrags bounds the fragments of one gather load (beyond it the caller
// should linearise the packet).
const maxFrags = 32

// NewMap returns an unloaded map for t.
func (t *Tag) NewMap() (*Map, error) {
	m := &Map{
		tag:    t,
		segs:   make([]Segment, 0, t.cfg.MaxSegments),
		segCPU: make([][]byte, 0, t.cfg.MaxSegments),
	}
	m.xlated = m.xlated1[:0]
	return m, nil
}

// maxXlated bounds the translations of one load: one per fragment plus one
// per extra segment a fragment crossing pages needs.
func (m *Map) maxXlated() int { return maxFrags + m.tag.cfg.MaxSegments }

// addXlated records a translated address to release at unload; the first
// load that needs more than one grows the list to its bound, once.
func (m *Map) addXlated(a uint64) {
	if len(m.xlated) == cap(m.xlated) {
		grown := make([]uint64, len(m.xlated), max(m.maxXlated(), 2*len(m.xlated)))
		copy(grown, m.xlated)
		m.xlated = grown
	}
	m.xlated = append(m.xlated, a)
}

// Loaded reports whether the map holds a buffer.
func (m *Map) Loaded() bool { return m.loaded }

// Segments returns the segments of the current load.
func (m *Map) Segments() []Segment { return m.segs }

// Load maps buf for a transfer in direction dir and returns its segments.
func (m *Map) Load(buf []byte, dir Dir) ([]Segment, error) {
	one := [1][]byte{buf}
	return m.LoadFrags(one[:], dir)
}

// LoadFrags maps a gather list (a packet in several fragments) as one
// transfer. Fragments that satisfy the tag are mapped in place (zero-copy);
// only those that do not are copied through the bounce buffer. A non-last
// fragment whose length breaks SegLenMultiple cannot be fixed by moving it,
// so it is coalesced with everything after it into the bounce buffer.
func (m *Map) LoadFrags(frags [][]byte, dir Dir) ([]Segment, error) {
	t := m.tag
	if m.loaded {
		return nil, fmt.Errorf("%w (tag %q)", ErrLoaded, t.cfg.Name)
	}
	if dir == 0 || dir&^Bidirectional != 0 {
		return nil, fmt.Errorf("busdma: tag %q: invalid direction %d", t.cfg.Name, dir)
	}
	if len(frags) == 0 {
		return nil, fmt.Errorf("%w (tag %q): no fragments", ErrEmpty, t.cfg.Name)
	}
	if len(frags) > maxFrags {
		return nil, fmt.Errorf("%w: tag %q: %d fragments (at most %d)", ErrTooManySegs, t.cfg.Name, len(frags), maxFrags)
	}
	total := 0
	for _, f := range frags {
		if len(f) == 0 {
			return nil, fmt.Errorf("%w (tag %q): zero-length fragment", ErrEmpty, t.cfg.Name)
		}
		total += len(f)
	}
	if total > t.cfg.MaxSize {
		return nil, fmt.Errorf("%w: tag %q: %d bytes (max %d)", ErrTooBig, t.cfg.Name, total, t.cfg.MaxSize)
	}
	m.dir = dir
	for i := 0; i < len(frags); i++ {
		f := frags[i]
		last := i == len(frags)-1
		if !last && len(f)%t.cfg.SegLenMultiple != 0 {
			if err := m.bounceFrom(frags[i:]); err != nil {
				return nil, m.fail(err)
			}
			break
		}
		nsegs, nx := len(m.segs), len(m.xlated)
		ok, err := m.direct(f, last)
		if err != nil {
			return nil, m.fail(err)
		}
		if ok {
			continue
		}
		// Undo the partial in-place mapping of this fragment.
		for _, a := range m.xlated[nx:] {
			_ = t.plat.Release(a)
		}
		m.xlated = m.xlated[:nx]
		m.segs, m.segCPU = m.segs[:nsegs], m.segCPU[:nsegs]
		if !last && len(m.segs)+1 >= cap(m.segs) {
			// No segment budget left to go on fragment by fragment.
			if err := m.bounceFrom(frags[i:]); err != nil {
				return nil, m.fail(err)
			}
			break
		}
		if err := m.bounceFrom(frags[i : i+1]); err != nil {
			return nil, m.fail(err)
		}
	}
	m.loaded = true
	m.single = len(m.segs) == 1 && len(m.recs) == 0
	return m.segs, nil
}

// direct maps f in place if every constraint holds; ok=false asks for a
// bounce.
func (m *Map) direct(f []byte, last bool) (bool, error) {
	t := m.tag
	if m.dir&FromDevice != 0 {
		// The device writes whole lines' worth of ownership: a line shared
		// with other data must not be handed to it.
		if addrOf(f)%uintptr(t.line) != 0 || len(f)%t.line != 0 {
			return false, nil
		}
	}
	for rest := f; len(rest) > 0; {
		addr, contig, err := t.plat.Translate(rest)
		if err != nil {
			return false, fmt.Errorf("busdma: tag %q: %w", t.cfg.Name, err)
		}
		m.addXlated(addr)
		if contig <= 0 || contig > len(rest) {
			return false, fmt.Errorf("busdma: tag %q: platform translated %d of %d bytes", t.cfg.Name, contig, len(rest))
		}
		if addr%uint64(t.cfg.Alignment) != 0 ||
			(t.cfg.AddrLimit != 0 && addr+uint64(contig)-1 > t.cfg.AddrLimit) {
			return false, nil
		}
		if !m.emit(addr, rest[:contig], last && contig == len(rest)) {
			return false, nil
		}
		rest = rest[contig:]
		if len(m.xlated) == m.maxXlated() && len(rest) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// emit appends the segments for a physically contiguous run, split at the
// boundary and at MaxSegSize. It returns false if the run does not fit the
// segment budget or would leave a non-last segment of a bad length.
func (m *Map) emit(addr uint64, cpu []byte, last bool) bool {
	t := m.tag
	for len(cpu) > 0 {
		n := len(cpu)
		if n > t.cfg.MaxSegSize {
			n = t.cfg.MaxSegSize
		}
		if b := t.cfg.Boundary; b != 0 {
			if room := b - addr%b; uint64(n) > room {
				n = int(room)
			}
		}
		isLast := last && n == len(cpu)
		if !isLast && n%t.cfg.SegLenMultiple != 0 {
			return false
		}
		if addr%uint64(t.cfg.Alignment) != 0 || len(m.segs) == cap(m.segs) {
			return false
		}
		m.segs = append(m.segs, Segment{Addr: addr, Len: n})
		m.segCPU = append(m.segCPU, cpu[:n:n])
		addr += uint64(n)
		cpu = cpu[n:]
	}
	return true
}

// bounceFrom copies frags (contiguously) into the bounce buffer at the next
// line-aligned offset and emits segments for that bounce space.
func (m *Map) bounceFrom(frags [][]byte) error {
	t := m.tag
	if m.bounce == nil {
		select {
		case m.bounce = <-t.bounce:
		default:
			return fmt.Errorf("%w (tag %q, %d in use)", ErrNoBounce, t.cfg.Name, t.cfg.BounceBuffers)
		}
		addr, _, err := t.plat.Translate(m.bounce)
		if err != nil {
			return fmt.Errorf("busdma: tag %q: bounce buffer: %w", t.cfg.Name, err)
		}
		m.bounceAddr = addr
		m.bounceUsed = 0
		m.Bounced++
	}
	start := roundUp(m.bounceUsed, max(t.line, t.cfg.Alignment))
	off := start
	if m.recs == nil {
		m.recs = make([]bounceRec, 0, maxFrags)
	}
	for _, f := range frags {
		if len(m.recs) == cap(m.recs) {
			return fmt.Errorf("%w: tag %q: too many bounced fragments", ErrTooManySegs, t.cfg.Name)
		}
		if off+len(f) > len(m.bounce) {
			return fmt.Errorf("%w: tag %q: bounced data exceeds %d bytes", ErrTooBig, t.cfg.Name, len(m.bounce))
		}
		m.recs = append(m.recs, bounceRec{client: f, off: off})
		off += len(f)
	}
	n := off - start
	// The bounce space is handed to the device in whole lines for reads.
	cpu := m.bounce[start : start+n]
	if !m.emit(m.bounceAddr+uint64(start), cpu, true) {
		return fmt.Errorf("%w: tag %q: %d bytes in at most %d segments", ErrTooManySegs, t.cfg.Name, n, t.cfg.MaxSegments)
	}
	m.bounceUsed = off
	return nil
}

func (m *Map) fail(err error) error {
	m.reset()
	return err
}

func (m *Map) reset() {
	t := m.tag
	for _, a := range m.xlated {
		_ = t.plat.Release(a)
	}
	if m.bounce != nil {
		t.bounce <- m.bounce
		m.bounce = nil
	}
	for i := range m.recs {
		m.recs[i] = bounceRec{}
	}
	for i := range m.segCPU {
		m.segCPU[i] = nil
	}
	m.segs, m.segCPU, m.recs, m.xlated = m.segs[:0], m.segCPU[:0], m.recs[:0], m.xlated[:0]
	m.loaded, m.single = false, false
	m.dir = 0
}

// Unload ends the mapping and returns any bounce buffer to the tag.
func (m *Map) Unload() error {
	if !m.loaded {
		return fmt.Errorf("%w (tag %q): unload", ErrNotLoaded, m.tag.cfg.Name)
	}
	m.reset()
	return nil
}

// Sync performs the cache maintenance for op (a combination of Pre/Post
// Read/Write) and always ends with a completion barrier.
func (m *Map) Sync(op SyncOp) error {
	if m.single {
		return m.SyncRange(op, 0, len(m.segCPU[0]))
	}
	return m.sync(op, 0, -1)
}

// SyncRange is Sync limited to the bytes [off, off+n) of the loaded
// buffer (the cache lines that hold them): the part a transfer used, such
// as the frame in a receive buffer sized for the largest one. A driver
// syncs a range only where the rest of the buffer needs no maintenance:
// PreWrite over the bytes the device will read, PostRead over the bytes
// it wrote, and PreRead over every byte the CPU touched since the
// buffer's last PreRead (the CPU never writes a receive buffer, so only
// lines it read can be cached, and those are clean). A map that bounces
// is synced whole.
func (m *Map) SyncRange(op SyncOp, off, n int) error {
	if !m.single || off < 0 || n < 0 {
		return m.syncRange(op, off, n)
	}
	// A map loaded as one segment without bouncing (a driver's ring
	// buffer): nothing to copy, and one cache call over the range. Done
	// here, not in a function of its own: a call less per sync, a few
	// per frame on a driver's path (about 20 instructions each on
	// mips32).
	t := m.tag
	if op&(PreRead|PostRead) != 0 && m.dir&FromDevice == 0 {
		return m.errDirection()
	}
	if cop := cacheOps[op&(PostWrite<<1-1)]; cop != 0 && !t.cfg.Coherent {
		cpu := m.segCPU[0]
		if hi := min(off+n, len(cpu)); off < hi {
			if f := t.lineOps[cop]; f != nil {
				// The lines holding cpu[off:hi] (LineCache), kept
				// alive by the map, which holds cpu.
				l := uintptr(t.line)
				va := uintptr(unsafe.Pointer(unsafe.SliceData(cpu)))
				f((va+uintptr(off))&^(l-1), (va+uintptr(hi)+l-1)&^(l-1), l)
				return nil // the function ended with the barrier
			}
			if err := t.plat.Cache(cop, cpu[off:hi]); err != nil {
				return fmt.Errorf("busdma: tag %q: %w", t.cfg.Name, err)
			}
			if t.cacheCompletes {
				return nil // Cache ended with the barrier
			}
		}
	}
	t.plat.Barrier()
	return nil
}

// RangeSync is a map's SyncRange for one operation, bound once to the
// buffer the map holds (Map.BindRange): for the syncs a driver makes for
// every frame, over the part of a ring buffer a transfer used. On a
// LineCache platform, for a map loaded as one segment without bouncing,
// Sync computes the lines and calls the platform's line function itself,
// inlined where it is hot: SyncRange's call, checks and table lookups
// cost about 50 instructions per sync on mips32, two syncs per NATed
// frame (natbench). Anywhere else, and for an empty or out-of-range
// range, Sync is SyncRange.
type RangeSync struct {
	m    *Map
	op   SyncOp
	f    func(start, end, line uintptr) // nil: SyncRange
	va   uintptr                        // the buffer's address (m holds the buffer)
	size int                            // the buffer's length
	line uintptr
}

// BindRange returns SyncRange for op bound to m as it is loaded now. It
// stays valid while m stays loaded with the same buffer; a driver binds
// after loading a ring buffer for good. It fails as SyncRange would for
// a direction the map was not loaded for.
func (m *Map) BindRange(op SyncOp) (RangeSync, error) {
	t := m.tag
	if !m.loaded {
		return RangeSync{}, fmt.Errorf("%w (tag %q): bind", ErrNotLoaded, t.cfg.Name)
	}
	if op&(PreRead|PostRead) != 0 && m.dir&FromDevice == 0 {
		return RangeSync{}, m.errDirection()
	}
	r := RangeSync{m: m, op: op}
	if cop := cacheOps[op&(PostWrite<<1-1)]; m.single && cop != 0 && !t.cfg.Coherent && t.lineOps[cop] != nil {
		cpu := m.segCPU[0]
		r.f, r.va, r.size, r.line = t.lineOps[cop], addrOf(cpu), len(cpu), uintptr(t.line)
	}
	return r, nil
}

// Sync is SyncRange(op, off, n) of the bound map.
func (r *RangeSync) Sync(off, n int) error {
	if hi := off + n; r.f != nil && off >= 0 && n > 0 && hi <= r.size {
		// The lines holding the range, kept alive by the map, which
		// holds the buffer; the function ends with the barrier.
		l := r.line
		r.f((r.va+uintptr(off))&^(l-1), (r.va+uintptr(hi)+l-1)&^(l-1), l)
		return nil
	}
	return r.m.SyncRange(r.op, off, n)
}

// syncRange is SyncRange for a map in several segments or bounced, and
// for a bad range.
func (m *Map) syncRange(op SyncOp, off, n int) error {
	if off < 0 || n < 0 {
		return fmt.Errorf("busdma: tag %q: sync range %d+%d", m.tag.cfg.Name, off, n)
	}
	return m.sync(op, off, n)
}

// errDirection is the error of a read sync of a buffer loaded for the
// device to read.
func (m *Map) errDirection() error {
	return fmt.Errorf("%w: tag %q: read sync of a buffer loaded for the device to read", ErrDirection, m.tag.cfg.Name)
}

// cacheOps maps each combination of SyncOps to the cache operation it
// needs (PreWrite writes back, PreRead and PostRead invalidate, both Pre
// at once do both; PostWrite nothing).
var cacheOps = func() (t [PostWrite << 1]CacheOp) {
	for op := range t {
		o := SyncOp(op)
		switch {
		case o&PreRead != 0 && o&PreWrite != 0:
			t[op] = WritebackInvalidate
		case o&PreWrite != 0:
			t[op] = Writeback
		case o&(PreRead|PostRead) != 0:
			t[op] = Invalidate
		}
	}
	return t
}()

// sync is Sync over [off, off+n), or the whole buffer if n < 0.
func (m *Map) sync(op SyncOp, off, n int) error {
	t := m.tag
	if !m.loaded {
		return fmt.Errorf("%w (tag %q): sync", ErrNotLoaded, t.cfg.Name)
	}
	if len(m.recs) != 0 {
		n = -1 // bounced: the copies and the bounce buffer's lines, whole
	}
	if op&(PreRead|PostRead) != 0 && m.dir&FromDevice == 0 {
		return fmt.Errorf("%w: tag %q: read sync of a buffer loaded for the device to read", ErrDirection, t.cfg.Name)
	}
	if op&PreWrite != 0 && m.dir&ToDevice != 0 {
		for _, r := range m.recs {
			copy(m.bounce[r.off:], r.client)
		}
	}
	if !t.cfg.Coherent {
		if cop := cacheOps[op&(PostWrite<<1-1)]; cop != 0 {
			pos := 0 // offset of cpu in the loaded buffer
			for _, cpu := range m.segCPU {
				seg := cpu
				if n >= 0 {
					// The part of [off, off+n) in this segment.
					lo, hi := max(off-pos, 0), min(off+n-pos, len(cpu))
					pos += len(cpu)
					if lo >= hi {
						continue
					}
					seg = cpu[lo:hi]
				}
				if err := t.plat.Cache(cop, seg); err != nil {
					return fmt.Errorf("busdma: tag %q: %w", t.cfg.Name, err)
				}
			}
		}
	}
	if op&PostRead != 0 {
		for _, r := range m.recs {
			copy(r.client, m.bounce[r.off:])
		}
	}
	t.plat.Barrier()
	return nil
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
