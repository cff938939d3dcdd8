package busdma_test

import (
	"runtime"
	"testing"

	"github.com/gowrt/gowrt/busdma"
)

// TestMapIsSmall: a driver makes a map per ring buffer (pcnet: 384 per
// port on malta), so an unused map must not carry the bookkeeping of a
// 32-fragment bounced load. Each map once cost about 1 KiB of heap: 744
// KiB for malta's two pcnets, on a board meant to fit in 16 MiB.
func TestMapIsSmall(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 2048})
	const n = 1000
	maps := make([]*busdma.Map, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range maps {
		m, err := tg.NewMap()
		if err != nil {
			t.Fatal(err)
		}
		maps[i] = m
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	const limit = 256
	if per > limit {
		t.Errorf("a one-segment map costs %d bytes of heap, want at most %d", per, limit)
	}
	runtime.KeepAlive(maps)
}

// TestMapGrowsOnceThenAllocatesNothing: a map whose loads need more
// translations than its first slot (a gather list) or the bounce buffer
// makes its larger lists once; after that, loads allocate nothing.
func TestMapGrowsOnceThenAllocatesNothing(t *testing.T) {
	_, tg := newTag(t, busdma.TagConfig{MaxSize: 4096, MaxSegments: 8, BounceBuffers: 1})
	buf, err := tg.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tg.NewMap()
	if err != nil {
		t.Fatal(err)
	}
	// Three fragments mapped in place, and one of 3 bytes that breaks
	// nothing but is short (the last): all direct on this tag.
	frags := [][]byte{buf[:1024], buf[1024:2048], buf[2048:3072], buf[3072:3075]}
	// An odd unaligned fragment the device cannot write in place: bounced.
	bounced := [][]byte{buf[3073:3100]}
	cycle := func() {
		if _, err := m.LoadFrags(frags, busdma.ToDevice); err != nil {
			t.Fatal(err)
		}
		if err := m.Unload(); err != nil {
			t.Fatal(err)
		}
		if _, err := m.LoadFrags(bounced, busdma.FromDevice); err != nil {
			t.Fatal(err)
		}
		if err := m.Sync(busdma.PostRead); err != nil {
			t.Fatal(err)
		}
		if err := m.Unload(); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // the first cycle grows the lists
	if m.Bounced == 0 {
		t.Fatal("the unaligned receive fragment was not bounced; the test does not cover the bounce lists")
	}
	if a := testing.AllocsPerRun(100, cycle); a != 0 {
		t.Errorf("%.1f allocations per load/unload cycle after the first, want 0", a)
	}
}
