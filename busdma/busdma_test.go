package busdma_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
)

func newTag(t testing.TB, cfg busdma.TagConfig) (*hwsim.System, *busdma.Tag) {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: 1, NoEviction: true})
	if cfg.Name == "" {
		cfg.Name = "t"
	}
	tg, err := busdma.NewTag(sys.Mem, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sys, tg
}

func TestInvalidTags(t *testing.T) {
	sys := hwsim.New(hwsim.Config{})
	for name, cfg := range map[string]busdma.TagConfig{
		"no size":            {},
		"alignment 3":        {MaxSize: 64, Alignment: 3},
		"boundary 100":       {MaxSize: 64, Boundary: 100},
		"boundary < align":   {MaxSize: 64, Alignment: 64, Boundary: 32},
		"seg not multiple":   {MaxSize: 64, MaxSegSize: 6, SegLenMultiple: 4},
		"negative segments":  {MaxSize: 64, MaxSegments: -1},
		"seg below multiple": {MaxSize: 64, MaxSegSize: 2, SegLenMultiple: 4},
	} {
		if _, err := busdma.NewTag(sys.Mem, cfg); !errors.Is(err, busdma.ErrTag) {
			t.Errorf("%s: got %v, want ErrTag", name, err)
		}
	}
	if _, err := busdma.NewTag(nil, busdma.TagConfig{MaxSize: 64}); !errors.Is(err, busdma.ErrTag) {
		t.Errorf("nil platform: %v", err)
	}
}

func TestMapMisuse(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 256})
	m, _ := tg.NewMap()
	if err := m.Sync(busdma.PreWrite); !errors.Is(err, busdma.ErrNotLoaded) {
		t.Errorf("sync of unloaded map: %v", err)
	}
	if err := m.Unload(); !errors.Is(err, busdma.ErrNotLoaded) {
		t.Errorf("unload of unloaded map: %v", err)
	}
	if _, err := m.Load(make([]byte, 257), busdma.ToDevice); !errors.Is(err, busdma.ErrTooBig) {
		t.Errorf("oversized load: %v", err)
	}
	if _, err := m.Load(nil, busdma.ToDevice); !errors.Is(err, busdma.ErrEmpty) {
		t.Errorf("empty load: %v", err)
	}
	buf := make([]byte, 64)
	if _, err := m.Load(buf, busdma.ToDevice); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Load(buf, busdma.ToDevice); !errors.Is(err, busdma.ErrLoaded) {
		t.Errorf("double load: %v", err)
	}
	if err := m.Sync(busdma.PostRead); !errors.Is(err, busdma.ErrDirection) {
		t.Errorf("read sync of a TX load: %v", err)
	}
	if err := m.Unload(); err != nil {
		t.Fatal(err)
	}
	// The one-segment fast path ends with the load.
	if err := m.SyncRange(busdma.PreWrite, 0, 10); !errors.Is(err, busdma.ErrNotLoaded) {
		t.Errorf("range sync after unload: %v", err)
	}
	if _, err := tg.Alloc(1000); !errors.Is(err, busdma.ErrTooBig) {
		t.Errorf("alloc beyond MaxSize: %v", err)
	}
}

// AR7130/AR7141/AR7161 TX: 4-byte aligned buffers, non-last fragments a
// multiple of 4. Good fragments stay in place; a misaligned one is bounced
// alone; a bad-length one is coalesced with the rest.
func TestAR7161FragmentRules(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 1536, MaxSegments: 8, Alignment: 4, SegLenMultiple: 4})
	backing := make([]byte, 4096)
	aligned := func(off, n int) []byte {
		for i := range backing {
			if addr(backing[i:])%32 == 0 {
				return backing[i+off : i+off+n]
			}
		}
		panic("no aligned spot")
	}
	hdr, mid, tail := aligned(0, 16), aligned(64+2, 100), aligned(256, 40)
	m, _ := tg.NewMap()
	segs, err := m.LoadFrags([][]byte{hdr, mid, tail}, busdma.ToDevice)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 3 || m.Bounced != 1 {
		t.Fatalf("misaligned middle: %d segments, bounced %d; want 3 segments with one bounce", len(segs), m.Bounced)
	}
	for _, s := range segs {
		if s.Addr%4 != 0 {
			t.Errorf("segment at %#x not 4-aligned", s.Addr)
		}
	}
	_ = m.Unload()

	odd := aligned(512, 30) // non-last, 30 % 4 != 0
	segs, err = m.LoadFrags([][]byte{hdr, odd, tail}, busdma.ToDevice)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 2 || segs[1].Len != 70 {
		t.Fatalf("bad-length fragment: segments %+v, want hdr in place + 70 coalesced bytes", segs)
	}
	for i, s := range segs[:len(segs)-1] {
		if s.Len%4 != 0 {
			t.Errorf("non-last segment %d has length %d", i, s.Len)
		}
	}
	_ = m.Unload()
}

func TestBoundaryAndSegSize(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 4096, MaxSegments: 8, MaxSegSize: 1024, Boundary: 2048})
	buf, err := tg.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := tg.NewMap()
	segs, err := m.Load(buf[100:3100], busdma.ToDevice)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range segs {
		if s.Len > 1024 || s.Addr/2048 != (s.Addr+uint64(s.Len)-1)/2048 {
			t.Errorf("segment %+v breaks size or boundary", s)
		}
		total += s.Len
	}
	if total != 3000 {
		t.Fatalf("segments cover %d bytes", total)
	}
}

func TestTooManySegments(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 4096, MaxSegments: 2, MaxSegSize: 512})
	m, _ := tg.NewMap()
	if _, err := m.Load(make([]byte, 2048), busdma.ToDevice); !errors.Is(err, busdma.ErrTooManySegs) {
		t.Fatalf("got %v", err)
	}
	if m.Loaded() {
		t.Fatal("failed load left the map loaded")
	}
}

func TestBouncePoolExhaustion(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 256, Alignment: 64, BounceBuffers: 1})
	a, b := make([]byte, 300), make([]byte, 300)
	m1, _ := tg.NewMap()
	m2, _ := tg.NewMap()
	mis := func(x []byte) []byte {
		for i := range x {
			if addr(x[i:])%64 == 8 {
				return x[i : i+100]
			}
		}
		panic("x")
	}
	if _, err := m1.Load(mis(a), busdma.ToDevice); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Load(mis(b), busdma.ToDevice); !errors.Is(err, busdma.ErrNoBounce) {
		t.Fatalf("second bounce with a pool of one: %v", err)
	}
	_ = m1.Unload()
	if _, err := m2.Load(mis(b), busdma.ToDevice); err != nil {
		t.Fatalf("bounce buffer not returned on unload: %v", err)
	}
}

// Bounced TX data reaches the device only via PREWRITE; bounced RX data
// reaches the client only via POSTREAD.
func TestBounceCopies(t *testing.T) {
	sys, tg := newTag(t, busdma.TagConfig{MaxSize: 256, Alignment: 64})
	raw := make([]byte, 400)
	var buf []byte
	for i := range raw {
		if addr(raw[i:])%64 == 4 {
			buf = raw[i : i+128]
			break
		}
	}
	copy(buf, bytes.Repeat([]byte("tx"), 64))
	m, _ := tg.NewMap()
	segs, err := m.Load(buf, busdma.Bidirectional)
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Sync(busdma.PreWrite | busdma.PreRead)
	got := make([]byte, 128)
	sys.Do(func() { _ = sys.Mem.DevRead(segs[0].Addr, got) })
	if !bytes.Equal(got, buf) {
		t.Fatal("device did not see the bounced TX data")
	}
	rx := bytes.Repeat([]byte("rx"), 64)
	sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr, rx) })
	_ = m.Sync(busdma.PostRead)
	if !bytes.Equal(buf, rx) {
		t.Fatal("client did not get the bounced RX data")
	}
	if len(sys.Misuses()) != 0 {
		t.Fatal(sys.Misuses())
	}
}

// loadedBidirectional allocates size bytes of tg's memory and loads them
// into a new map for both directions, handed to the device once (PreRead
// and PreWrite), as a driver's ring buffer starts.
func loadedBidirectional(t *testing.T, tg *busdma.Tag, size int) ([]byte, *busdma.Map, []busdma.Segment) {
	t.Helper()
	buf, err := tg.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tg.NewMap()
	if err != nil {
		t.Fatal(err)
	}
	segs, err := m.Load(buf, busdma.Bidirectional)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(busdma.PreRead | busdma.PreWrite); err != nil {
		t.Fatal(err)
	}
	return buf, m, segs
}

// SyncRange maintains the lines of its range and no others: a PreWrite
// over the first bytes makes those (whole lines) reach the device and
// leaves the rest in the CPU's cache; a PostRead over the first bytes of
// a receive shows the CPU what the device wrote there. Syncing the whole
// buffer after a range works as before, and bad ranges are refused.
func TestSyncRange(t *testing.T) {
	const size, n = 512, 100
	sys, tg := newTag(t, busdma.TagConfig{MaxSize: size, Alignment: 64})
	buf, m, segs := loadedBidirectional(t, tg, size)
	tx := bytes.Repeat([]byte{0xa5}, size)
	copy(buf, tx)
	if err := m.SyncRange(busdma.PreWrite, 0, n); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, n)
	sys.Do(func() { _ = sys.Mem.DevRead(segs[0].Addr, got) })
	if !bytes.Equal(got, tx[:n]) || len(sys.Misuses()) != 0 {
		t.Fatalf("device did not see the range: %x %v", got, sys.Misuses())
	}
	// The model flags a device read of a line still dirty in the cache:
	// the lines beyond the range were not written back.
	sys.Do(func() { _ = sys.Mem.DevRead(segs[0].Addr+256, got) })
	if len(sys.Misuses()) == 0 {
		t.Fatal("lines beyond the range were written back too")
	}
	misused := len(sys.Misuses())
	if err := m.Sync(busdma.PreWrite | busdma.PreRead); err != nil {
		t.Fatal(err)
	}
	rx := bytes.Repeat([]byte("rx"), size/2)
	sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr, rx) })
	if err := m.SyncRange(busdma.PostRead, 0, n); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf[:n], rx[:n]) {
		t.Fatalf("CPU does not see the received range: %q", buf[:n])
	}
	if err := m.SyncRange(busdma.PostRead, 0, -1); err == nil {
		t.Fatal("negative length accepted")
	}
	if len(sys.Misuses()) != misused {
		t.Fatal(sys.Misuses()[misused:])
	}
}

// countingPlatform counts the Barrier calls busdma makes on a Platform;
// completing adds the CompletingCache mark, and then its Cache issues the
// barrier itself, as mipsdma's closing SYNC does.
type countingPlatform struct {
	*hwsim.Memory
	barriers, caches int
}

func (p *countingPlatform) Barrier() { p.barriers++; p.Memory.Barrier() }
func (p *countingPlatform) Cache(op busdma.CacheOp, b []byte) error {
	p.caches++
	return p.Memory.Cache(op, b)
}

type completingPlatform struct{ countingPlatform }

func (p *completingPlatform) Cache(op busdma.CacheOp, b []byte) error {
	err := p.countingPlatform.Cache(op, b)
	p.Memory.Barrier()
	return err
}
func (p *completingPlatform) CacheCompletes() {}

// TestSyncBarriers checks that a sync ends with the platform's barrier
// unless the platform's cache maintenance completes by itself
// (busdma.CompletingCache): then only a sync without maintenance
// (PostWrite) issues one.
func TestSyncBarriers(t *testing.T) {
	for _, completing := range []bool{false, true} {
		sys := hwsim.New(hwsim.Config{Seed: 1, NoEviction: true})
		var plat busdma.Platform
		var cp *countingPlatform
		if completing {
			c := &completingPlatform{countingPlatform{Memory: sys.Mem}}
			plat, cp = c, &c.countingPlatform
		} else {
			cp = &countingPlatform{Memory: sys.Mem}
			plat = cp
		}
		tg, err := busdma.NewTag(plat, busdma.TagConfig{Name: "b", MaxSize: 256})
		if err != nil {
			t.Fatal(err)
		}
		buf, err := tg.Alloc(256)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := tg.NewMap()
		if _, err := m.Load(buf, busdma.Bidirectional); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			op                busdma.SyncOp
			barriers, caches  int
			completingBarrier int
		}{
			{busdma.PreWrite, 1, 1, 0},
			{busdma.PreRead, 1, 1, 0},
			{busdma.PostRead, 1, 1, 0},
			{busdma.PostWrite, 1, 0, 1},
		} {
			cp.barriers, cp.caches = 0, 0
			if err := m.SyncRange(c.op, 0, 64); err != nil {
				t.Fatal(err)
			}
			want := c.barriers
			if completing {
				want = c.completingBarrier
			}
			if cp.barriers != want || cp.caches != c.caches {
				t.Errorf("completing %v, op %v: %d barriers and %d cache calls, want %d and %d",
					completing, c.op, cp.barriers, cp.caches, want, c.caches)
			}
		}
		if len(sys.Misuses()) != 0 {
			t.Fatal(sys.Misuses())
		}
	}
}

// linePlatform is a busdma.LineCache over the simulated memory: its line
// functions find the buffer the addresses lie in among those it
// allocated and run the model's maintenance over exactly those lines,
// then its barrier. lineCalls counts them; Cache counts in caches.
type linePlatform struct {
	countingPlatform
	bufs      [][]byte
	lineCalls int
	bad       []string
}

func (p *linePlatform) AllocCached(name string, size, align int) ([]byte, uint64, error) {
	b, a, err := p.Memory.AllocCached(name, size, align)
	if err == nil {
		p.bufs = append(p.bufs, b)
	}
	return b, a, err
}

func (p *linePlatform) Cache(op busdma.CacheOp, b []byte) error {
	err := p.countingPlatform.Cache(op, b)
	p.Memory.Barrier()
	return err
}
func (p *linePlatform) CacheCompletes() {}

func (p *linePlatform) LineOp(op busdma.CacheOp) func(start, end, line uintptr) {
	return func(start, end, line uintptr) {
		p.lineCalls++
		if line != uintptr(p.LineSize()) || start%line != 0 || end%line != 0 || end <= start {
			p.bad = append(p.bad, fmt.Sprintf("op %d over [%#x, %#x) by %d", op, start, end, line))
			return
		}
		for _, b := range p.bufs {
			if a := addr(b); start >= a && end <= a+uintptr(len(b)) {
				_ = p.Memory.Cache(op, b[start-a:end-a])
				p.Memory.Barrier()
				return
			}
		}
		p.bad = append(p.bad, fmt.Sprintf("op %d over [%#x, %#x) outside the buffers", op, start, end))
	}
}

// TestSyncRangeLineCache: on a LineCache platform a single-segment map's
// range syncs go through the line functions, over the lines that hold the
// range (the model flags a device read of a line left dirty, and the CPU
// would read stale data from one left valid), with no Cache call and no
// further barrier.
func TestSyncRangeLineCache(t *testing.T) {
	const size = 512
	sys := hwsim.New(hwsim.Config{Seed: 1, NoEviction: true})
	p := &linePlatform{countingPlatform: countingPlatform{Memory: sys.Mem}}
	tg, err := busdma.NewTag(p, busdma.TagConfig{Name: "l", MaxSize: size, Alignment: 64})
	if err != nil {
		t.Fatal(err)
	}
	buf, m, segs := loadedBidirectional(t, tg, size)
	line := sys.Mem.LineSize()
	for _, r := range []struct{ off, n int }{{0, 100}, {line + 3, 2*line - 5}, {size - 1, 1}, {7, size - 7}} {
		p.lineCalls, p.caches, p.barriers = 0, 0, 0
		tx := bytes.Repeat([]byte{byte(r.off + 1)}, r.n)
		copy(buf[r.off:], tx)
		if err := m.SyncRange(busdma.PreWrite, r.off, r.n); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, r.n)
		sys.Do(func() { _ = sys.Mem.DevRead(segs[0].Addr+uint64(r.off), got) })
		if !bytes.Equal(got, tx) {
			t.Fatalf("%+v: device did not see the range: %x", r, got)
		}
		rx := bytes.Repeat([]byte{byte(r.off + 2)}, r.n)
		sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr+uint64(r.off), rx) })
		if err := m.SyncRange(busdma.PostRead, r.off, r.n); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[r.off:r.off+r.n], rx) {
			t.Fatalf("%+v: CPU does not see the received range: %x", r, buf[r.off:r.off+r.n])
		}
		if p.lineCalls != 2 || p.caches != 0 || p.barriers != 0 || len(p.bad) != 0 {
			t.Fatalf("%+v: %d line calls, %d Cache calls, %d barriers, want 2, 0, 0; %v", r, p.lineCalls, p.caches, p.barriers, p.bad)
		}
		// Leave the lines as a new PreRead would: clean and invalid.
		if err := m.SyncRange(busdma.PreRead|busdma.PreWrite, 0, size); err != nil {
			t.Fatal(err)
		}
	}
	if len(sys.Misuses()) != 0 {
		t.Fatal(sys.Misuses())
	}
}

// TestBindRange: a RangeSync does what SyncRange does over the same
// range — the device sees what the CPU wrote before a PreWrite, the CPU
// what the device wrote after a PostRead — with one call of the
// platform's line function and no other work on a LineCache platform,
// through Cache elsewhere, and through SyncRange for an empty or bad
// range (a barrier; an error). Binding checks the map as SyncRange does,
// and a bound sync allocates nothing.
func TestBindRange(t *testing.T) {
	const size = 512
	for _, lines := range []bool{true, false} {
		sys := hwsim.New(hwsim.Config{Seed: 1, NoEviction: true})
		lp := &linePlatform{countingPlatform: countingPlatform{Memory: sys.Mem}}
		var p busdma.Platform = &lp.countingPlatform
		if lines {
			p = lp
		}
		tg, err := busdma.NewTag(p, busdma.TagConfig{Name: "b", MaxSize: size, Alignment: 64})
		if err != nil {
			t.Fatal(err)
		}
		buf, m, segs := loadedBidirectional(t, tg, size)
		pre, err := m.BindRange(busdma.PreWrite)
		if err != nil {
			t.Fatal(err)
		}
		post, err := m.BindRange(busdma.PostRead)
		if err != nil {
			t.Fatal(err)
		}
		line := sys.Mem.LineSize()
		for _, r := range []struct{ off, n int }{{0, 100}, {line + 3, 2*line - 5}, {size - 1, 1}, {7, size - 7}} {
			lp.lineCalls, lp.caches, lp.barriers = 0, 0, 0
			tx := bytes.Repeat([]byte{byte(r.off + 1)}, r.n)
			copy(buf[r.off:], tx)
			if err := pre.Sync(r.off, r.n); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, r.n)
			sys.Do(func() { _ = sys.Mem.DevRead(segs[0].Addr+uint64(r.off), got) })
			if !bytes.Equal(got, tx) {
				t.Fatalf("lines=%v %+v: device did not see the range: %x", lines, r, got)
			}
			rx := bytes.Repeat([]byte{byte(r.off + 2)}, r.n)
			sys.Do(func() { _ = sys.Mem.DevWrite(segs[0].Addr+uint64(r.off), rx) })
			if err := post.Sync(r.off, r.n); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf[r.off:r.off+r.n], rx) {
				t.Fatalf("lines=%v %+v: CPU does not see the received range: %x", lines, r, buf[r.off:r.off+r.n])
			}
			wantLine, wantCache := 2, 0
			if !lines {
				wantLine, wantCache = 0, 2
			}
			if lp.lineCalls != wantLine || lp.caches != wantCache || len(lp.bad) != 0 {
				t.Fatalf("lines=%v %+v: %d line calls, %d Cache calls, want %d, %d; %v",
					lines, r, lp.lineCalls, lp.caches, wantLine, wantCache, lp.bad)
			}
			if err := m.SyncRange(busdma.PreRead|busdma.PreWrite, 0, size); err != nil {
				t.Fatal(err)
			}
		}
		lp.barriers = 0
		if err := post.Sync(5, 0); err != nil || lp.barriers != 1 {
			t.Fatalf("lines=%v: empty range: %v, %d barriers, want nil and 1", lines, err, lp.barriers)
		}
		for _, r := range []struct{ off, n int }{{-1, 4}, {0, -1}} {
			if err := post.Sync(r.off, r.n); err == nil {
				t.Fatalf("lines=%v: range %+v accepted", lines, r)
			}
		}
		if a := testing.AllocsPerRun(100, func() { _ = post.Sync(0, 64) }); a != 0 {
			t.Fatalf("lines=%v: %v allocations per bound sync", lines, a)
		}
		if len(sys.Misuses()) != 0 {
			t.Fatal(sys.Misuses())
		}

		out, _ := tg.NewMap()
		if _, err := out.BindRange(busdma.PostRead); !errors.Is(err, busdma.ErrNotLoaded) {
			t.Fatalf("lines=%v: bind of an unloaded map: %v", lines, err)
		}
		if _, err := out.Load(buf, busdma.ToDevice); err != nil {
			t.Fatal(err)
		}
		if _, err := out.BindRange(busdma.PostRead); !errors.Is(err, busdma.ErrDirection) {
			t.Fatalf("lines=%v: PostRead bound to a map loaded ToDevice: %v", lines, err)
		}
	}
}
