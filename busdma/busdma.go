// Package busdma maps memory for device DMA on machines whose caches do not
// snoop DMA (the MIPS 24K/74K in the AR71xx family): tags that describe what
// a device can address, maps that turn buffers into bus-address segments —
// bouncing through driver-owned memory when a buffer breaks a constraint —
// and the cache maintenance around each transfer.
//
// The model is FreeBSD's bus_dma(9), reduced to what gowrt's drivers use:
//
//	tag, _ := busdma.NewTag(platform, busdma.TagConfig{Alignment: 4, MaxSize: 1536, MaxSegments: 4})
//	m, _ := tag.NewMap()
//	segs, _ := m.Load(frame, busdma.ToDevice)    // program segs into descriptors
//	m.Sync(busdma.PreWrite)                      // before the device reads
//	… device transfers …
//	m.Sync(busdma.PostWrite)
//	m.Unload()
//
// Sync rules for non-coherent caches, as FreeBSD's bus_dmamap_sync does them
// (sys/mips/mips/busdma_machdep.c; Linux's arch/mips/mm/dma-noncoherent.c
// skips the PostRead invalidate on 24K/74K):
//
//	PreWrite   write back the CPU's dirty lines so memory holds the data
//	PreRead    invalidate, so no dirty line can later overwrite DMA data
//	PostRead   invalidate again, dropping any line refetched during DMA, then
//	           copy out of the bounce buffer if one was used
//	PostWrite  nothing to do on MIPS
//
// and every Sync ends with a completion barrier (SYNC), even when no cache
// line needed work: FreeBSD's MIPS busdma once skipped it when nothing was
// copied and drivers broke at high packet rates.
//
// Re-arming a receive buffer the CPU never wrote. The PreRead invalidate
// exists to drop dirty lines, which the cache could write back over the
// device's data at any time during the transfer. A buffer loaded
// FromDevice (not bounced), handed to the device once with PreRead, and
// since then only read by the CPU, each transfer followed by a PostRead
// over every byte the CPU then reads, holds no dirty line: a driver may
// hand it back to the device without another PreRead (the stale clean
// lines it may hold are dropped by the next PostRead before the CPU reads
// them). The driver owns that promise: one CPU store into such a buffer
// is lost, or worse (hwsim reports the line dirty when the device writes
// it). A driver whose buffers can bounce, or whose CPU writes them, syncs
// PreRead every time.
//
// A buffer loaded FromDevice whose first or last cache line is shared with
// other data is bounced: invalidating such a line would destroy the other
// data, and the device writing it would race the CPU's use of its
// neighbours. Load, Sync and Unload allocate nothing; bounce memory is
// reserved per tag when the tag is made.
package busdma

import (
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/barrier"
)

// Platform is what busdma needs from the machine. The bare-metal kernel
// provides one for MIPS (cache instructions over kseg0/kuseg aliases); the
// hwsim Memory is the simulated one.
type Platform interface {
	// LineSize is the D-cache line size in bytes (from CP0 Config1 on MIPS).
	LineSize() int
	// AllocCoherent returns uncached memory reachable through a Space in
	// byte order order, and its bus address.
	AllocCoherent(name string, size, align int, order barrier.Order) (barrier.Space, uint64, error)
	// AllocCached returns cacheable, physically contiguous memory that
	// starts and ends on cache-line boundaries, and its bus address.
	AllocCached(name string, size, align int) ([]byte, uint64, error)
	// Translate returns the bus address of buf[0] and how many bytes from
	// there are physically contiguous.
	Translate(buf []byte) (addr uint64, contiguous int, err error)
	// Release tells the platform a translated address is no longer in use.
	Release(addr uint64) error
	// Cache performs D-cache maintenance over every line overlapping buf.
	Cache(op CacheOp, buf []byte) error
	// Barrier is a completion barrier (SYNC): cache maintenance and
	// earlier stores are complete before later accesses.
	Barrier()
}

// CompletingCache is a Platform whose Cache, over a non-empty buffer,
// ends with a completion barrier of its own (mipsdma: the hit loop's
// closing SYNC): the maintenance and every earlier access are complete
// when it returns, as if Barrier followed. A Map sync that did cache
// maintenance on such a platform issues no second barrier (a SYNC and
// two calls, about 25 instructions per sync on mips32, natbench).
type CompletingCache interface {
	Platform
	// CacheCompletes marks the platform; it does nothing.
	CacheCompletes()
}

// LineCache is a CompletingCache that also hands out its cache
// maintenance as plain functions of line addresses: LineOp(op) returns
// the function that performs op over the lines [start, end) (line-aligned
// addresses of the memory a buffer occupies, line the LineSize) and ends
// with the completion barrier, what Cache does for the buffer those lines
// cover (nil for an op it has no function for). A tag calls them for the
// syncs of maps loaded as one segment, a driver's receive and transmit
// buffers synced for every frame, without Cache's interface call,
// operation switch, error result and line rounding: about 35
// instructions per sync on mips32 (natbench).
type LineCache interface {
	CompletingCache
	LineOp(op CacheOp) func(start, end, line uintptr)
}

// CoherentWords is implemented by the Space a Platform's AllocCoherent
// returns when the platform maps coherent memory straight into the
// program (mipsdma: the uncached kseg1 alias): Words gives the same
// memory as 32-bit words, which a driver may read and write with
// sync/atomic loads and stores, each one access the compiler neither
// merges nor drops, instead of through the Space's methods (an interface
// call, a bounds check and a call to the access itself, about 40
// instructions per access on mips32; a driver touches its descriptors
// several times per frame). swap reports that the memory's byte order
// is not the CPU's: the driver swaps the bytes of each word itself. The
// Space's Barrier still orders the accesses (on such a platform it is
// barrier.Full). Platforms that model the memory (hwsim) do not
// implement it, and drivers use the Space there.
type CoherentWords interface {
	barrier.Space
	Words() (w []uint32, swap bool)
}

// CacheOp is a D-cache maintenance operation.
type CacheOp uint8

// The values match hwsim.CacheOp so the simulated memory is a Platform.
const (
	Writeback           CacheOp = 1 << iota // write dirty lines to memory
	Invalidate                              // discard lines
	WritebackInvalidate = Writeback | Invalidate
)

// Dir is the direction of a transfer, given at Load.
type Dir uint8

const (
	ToDevice      Dir = 1 << iota // the device reads the buffer (TX)
	FromDevice                    // the device writes the buffer (RX)
	Bidirectional = ToDevice | FromDevice
)

// SyncOp is a point in a transfer's life.
type SyncOp uint8

const (
	PreRead SyncOp = 1 << iota
	PostRead
	PreWrite
	PostWrite
)

// Errors. Each is wrapped with the tag's name and the offending values.
var (
	ErrTag         = errors.New("busdma: invalid tag")
	ErrTooBig      = errors.New("busdma: buffer larger than the tag allows")
	ErrTooManySegs = errors.New("busdma: buffer needs more segments than the tag allows")
	ErrLoaded      = errors.New("busdma: map already loaded")
	ErrNotLoaded   = errors.New("busdma: map not loaded")
	ErrNoBounce    = errors.New("busdma: no bounce buffer free")
	ErrEmpty       = errors.New("busdma: empty buffer")
	ErrDirection   = errors.New("busdma: sync does not match the load direction")
)

// TagConfig is what a device can do.
type TagConfig struct {
	Name string
	// Alignment of every segment's bus address (power of two; 0 means 1).
	Alignment int
	// Boundary: no segment crosses a multiple of it (power of two; 0 = none).
	Boundary uint64
	// MaxSegSize is the largest segment (0 = MaxSize).
	MaxSegSize int
	// MaxSegments is the most segments one load may produce (0 = 1).
	MaxSegments int
	// MaxSize is the most bytes one load may map.
	MaxSize int
	// AddrLimit is the highest bus address the device reaches (0 = all).
	AddrLimit uint64
	// SegLenMultiple: every segment but the last must have a length that is
	// a multiple of it (AR7130/AR7141/AR7161 TX: 4). 0 means 1.
	SegLenMultiple int
	// Coherent: the device snoops the caches, so only barriers are needed.
	Coherent bool
	// BounceBuffers is how many loads may be bounced at once (default 4).
	BounceBuffers int
}

// Segment is one contiguous piece of a loaded buffer, in bus addresses.
type Segment struct {
	Addr uint64
	Len  int
}

// Tag is a validated TagConfig bound to a Platform.
type Tag struct {
	cfg  TagConfig
	plat Platform
	line int
	// cacheCompletes: plat is a CompletingCache.
	cacheCompletes bool
	// lineOps are a LineCache platform's functions, by CacheOp; nil
	// entries (any other platform) use Cache.
	lineOps [WritebackInvalidate + 1]func(start, end, line uintptr)
	bounce  chan []byte // free bounce buffers, each MaxSize rounded up to lines
}

func pow2(x uint64) bool { return x != 0 && x&(x-1) == 0 }

// NewTag validates cfg and reserves its bounce buffers.
func NewTag(p Platform, cfg TagConfig) (*Tag, error) {
	bad := func(format string, a ...any) (*Tag, error) {
		return nil, fmt.Errorf("%w %q: %s", ErrTag, cfg.Name, fmt.Sprintf(format, a...))
	}
	if p == nil {
		return bad("no platform")
	}
	if cfg.Alignment == 0 {
		cfg.Alignment = 1
	}
	if cfg.MaxSegments == 0 {
		cfg.MaxSegments = 1
	}
	if cfg.SegLenMultiple == 0 {
		cfg.SegLenMultiple = 1
	}
	if cfg.MaxSize <= 0 {
		return bad("MaxSize %d", cfg.MaxSize)
	}
	if cfg.MaxSegSize == 0 {
		cfg.MaxSegSize = cfg.MaxSize
	}
	if cfg.BounceBuffers == 0 {
		cfg.BounceBuffers = 4
	}
	switch {
	case !pow2(uint64(cfg.Alignment)):
		return bad("alignment %d is not a power of two", cfg.Alignment)
	case cfg.Boundary != 0 && !pow2(cfg.Boundary):
		return bad("boundary %#x is not a power of two", cfg.Boundary)
	case cfg.Boundary != 0 && cfg.Boundary < uint64(cfg.Alignment):
		return bad("boundary %#x below alignment %d", cfg.Boundary, cfg.Alignment)
	case cfg.MaxSegSize < 0 || cfg.MaxSegments < 0 || cfg.BounceBuffers < 0:
		return bad("negative size or count")
	case cfg.MaxSegSize < cfg.SegLenMultiple:
		return bad("MaxSegSize %d below SegLenMultiple %d", cfg.MaxSegSize, cfg.SegLenMultiple)
	case cfg.SegLenMultiple < 0 || cfg.MaxSegSize%cfg.SegLenMultiple != 0:
		return bad("MaxSegSize %d is not a multiple of SegLenMultiple %d", cfg.MaxSegSize, cfg.SegLenMultiple)
	}
	line := p.LineSize()
	if !pow2(uint64(line)) {
		return bad("platform line size %d", line)
	}
	t := &Tag{cfg: cfg, plat: p, line: line, bounce: make(chan []byte, cfg.BounceBuffers)}
	_, t.cacheCompletes = p.(CompletingCache)
	if lc, ok := p.(LineCache); ok {
		for _, op := range []CacheOp{Writeback, Invalidate, WritebackInvalidate} {
			t.lineOps[op] = lc.LineOp(op)
		}
	}
	align := max(cfg.Alignment, line)
	// Room for MaxSize bytes plus a line of alignment slack per bounced fragment.
	size := roundUp(cfg.MaxSize, line) + align + line*maxFrags
	for i := 0; i < cfg.BounceBuffers; i++ {
		b, addr, err := p.AllocCached(cfg.Name+"-bounce", size, align)
		if err != nil {
			return nil, fmt.Errorf("busdma: tag %q: bounce buffer: %w", cfg.Name, err)
		}
		if cfg.AddrLimit != 0 && addr+uint64(size) > cfg.AddrLimit+1 {
			return bad("bounce memory at %#x is above the address limit %#x", addr, cfg.AddrLimit)
		}
		t.bounce <- b
	}
	return t, nil
}

// Config returns the tag's configuration with defaults filled in.
func (t *Tag) Config() TagConfig { return t.cfg }

// Platform returns the platform the tag was made on.
func (t *Tag) Platform() Platform { return t.plat }

func roundUp(x, a int) int { return (x + a - 1) &^ (a - 1) }

// AllocCoherent returns size bytes of uncached memory satisfying the tag
// (descriptor rings), accessed through a Space, and its bus address.
func (t *Tag) AllocCoherent(size int, order barrier.Order) (barrier.Space, uint64, error) {
	if size <= 0 {
		return nil, 0, fmt.Errorf("busdma: tag %q: coherent allocation of %d bytes", t.cfg.Name, size)
	}
	s, addr, err := t.plat.AllocCoherent(t.cfg.Name+"-coherent", size, t.cfg.Alignment, order)
	if err != nil {
		return nil, 0, err
	}
	if err := t.checkRange(addr, size); err != nil {
		return nil, 0, err
	}
	return s, addr, nil
}

// Alloc returns a cacheable, cache-line aligned buffer of size bytes that
// loads without bouncing (RX buffers).
func (t *Tag) Alloc(size int) ([]byte, error) {
	if size <= 0 || size > t.cfg.MaxSize {
		return nil, fmt.Errorf("%w: tag %q: allocation of %d bytes (max %d)", ErrTooBig, t.cfg.Name, size, t.cfg.MaxSize)
	}
	b, addr, err := t.plat.AllocCached(t.cfg.Name+"-buf", roundUp(size, t.line), max(t.cfg.Alignment, t.line))
	if err != nil {
		return nil, err
	}
	if err := t.checkRange(addr, size); err != nil {
		return nil, err
	}
	return b[:size:roundUp(size, t.line)], nil
}

func (t *Tag) checkRange(addr uint64, size int) error {
	if t.cfg.AddrLimit != 0 && addr+uint64(size)-1 > t.cfg.AddrLimit {
		return fmt.Errorf("busdma: tag %q: platform memory at %#x is above the address limit %#x", t.cfg.Name, addr, t.cfg.AddrLimit)
	}
	if addr%uint64(t.cfg.Alignment) != 0 {
		return fmt.Errorf("busdma: tag %q: platform returned %#x, not %d-aligned", t.cfg.Name, addr, t.cfg.Alignment)
	}
	return nil
}
