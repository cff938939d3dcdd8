package bridge

import (
	"testing"
	"time"
)

// TestFDBTimestamps: entries age by their wrapping 25-bit timestamps:
// live until AgeTime, also across the counter's wrap; a timestamp from
// the future (another CPU's later clock) counts as just seen; after a
// silence longer than timestamps can tell apart, a sweep forgets every
// station rather than read one a whole wrap late (which would look
// fresh).
func TestFDBTimestamps(t *testing.T) {
	const age = int64(10 * time.Second)
	unit := int64(1) << timeShift
	key := fdbKey(1, []byte{2, 0, 0, 0, 0, 9})
	look := func(f *fdb, now int64) bool {
		_, ok := f.learnLookup(0, false, 0, key, true, now, nil)
		return ok
	}
	for _, start := range []int64{5 * unit, (timeMask - 3) * unit, (1<<32 - 3) * unit} {
		f := newFDB(64, age, 1)
		f.lastSweep.Store(units(start))
		f.learn(key, 3, start)
		if p, ok := f.lookup(key, start+age-2*unit); !ok || p != 3 {
			t.Fatalf("start %#x: not found just before AgeTime (port %d)", start/unit, p)
		}
		if look(f, start+age+2*unit) {
			t.Fatalf("start %#x: found after AgeTime", start/unit)
		}
	}
	f := newFDB(64, age, 1)
	f.learn(key, 3, 100*unit)
	if _, ok := f.lookup(key, 90*unit); !ok {
		t.Fatal("an entry learned by a later clock read is not live")
	}
	f = newFDB(64, age, 1)
	now := int64(1000) * unit
	f.lastSweep.Store(units(now))
	f.learn(key, 3, now)
	wrap := now + (1<<timeBits)*unit // aliases the learning time exactly
	if look(f, wrap) {
		t.Fatal("an entry from a whole timestamp wrap ago was found")
	}
	if _, err := New(Config{MAC: brMAC, AgeTime: MaxAgeTime + time.Second}); err == nil {
		t.Fatal("AgeTime beyond MaxAgeTime accepted")
	}
	if _, err := New(Config{MAC: brMAC, AgeTime: MaxAgeTime}); err != nil {
		t.Fatal(err)
	}
}

// TestFDBSlotCache: learning and looking up through a port's slot cache
// gives what the uncached table gives, through station moves, aging, a
// port flush (tombstones), and sweeps that replace the table under the
// cached slots.
func TestFDBSlotCache(t *testing.T) {
	const age = int64(10 * time.Second)
	unit := int64(1) << timeShift
	a := fdbKey(1, []byte{2, 0, 0, 0, 0, 1})
	b := fdbKey(1, []byte{2, 0, 0, 0, 0, 2})
	// lone learns through learnCached (inputToHost's learning) and
	// looks up without its cache.
	cached, plain, lone := newFDB(64, age, 7), newFDB(64, age, 7), newFDB(64, age, 7)
	var c, lc slotCache
	now := 10 * unit
	cached.lastSweep.Store(units(now))
	plain.lastSweep.Store(units(now))
	lone.lastSweep.Store(units(now))
	step := func(name string, src uint64, port uint8, dst uint64) {
		t.Helper()
		p1, ok1 := cached.learnLookup(src, true, port, dst, true, now, &c)
		p2, ok2 := plain.learnLookup(src, true, port, dst, true, now, nil)
		if p1 != p2 || ok1 != ok2 {
			t.Fatalf("%s: cached lookup (%d, %v), uncached (%d, %v)", name, p1, ok1, p2, ok2)
		}
		lone.learnCached(src, port, now, &lc)
		if p3, ok3 := lone.lookup(dst, now); p3 != p2 || ok3 != ok2 {
			t.Fatalf("%s: after learnCached lookup (%d, %v), uncached (%d, %v)", name, p3, ok3, p2, ok2)
		}
		if n1, n2, n3 := cached.entries(now), plain.entries(now), lone.entries(now); n1 != n2 || n3 != n2 {
			t.Fatalf("%s: %d entries cached, %d learnCached, %d uncached", name, n1, n3, n2)
		}
	}
	step("b learned", b, 2, a)
	step("a learned", a, 1, b) // caches a (after its insert) and b
	step("a again", a, 1, b)   // both from the cache
	if c.src == nil || c.dst == nil {
		t.Fatal("slots not cached")
	}
	step("b moves", b, 3, a) // b's slot rewritten through the plain path
	step("a sees b moved", a, 1, b)
	if p, _ := cached.lookup(b, now); p != 3 {
		t.Fatalf("b on port %d after its move, want 3", p)
	}
	now += 2 * refreshNS
	step("a refreshed from the cache", a, 1, b)
	if v := c.src.val.Load(); seenAgo(v, now) != 0 {
		t.Fatalf("cached refresh left a timestamp %d units old", seenAgo(v, now))
	}
	cached.flushPort(3)
	plain.flushPort(3)
	lone.flushPort(3)
	step("b flushed", a, 1, b) // the cached dst slot is a tombstone now
	cached.flushPort(1)
	plain.flushPort(1)
	lone.flushPort(1)
	step("a revived from its cached slot", a, 1, b)
	old, lold := c.tab, lone.tab.Load()
	now += age // half the aging period passed: the next call sweeps
	step("after a sweep", a, 1, b)
	if lone.tab.Load() == lold {
		t.Fatal("learnCached did not sweep when a sweep was due")
	}
	if cached.tab.Load() == old || c.tab == old {
		t.Fatal("no sweep, or the cache kept the old table")
	}
	if lone.tab.Load() != lc.tab {
		t.Fatal("learnCached kept a cache of the old table")
	}
	// A sweep by another port's frame: learnCached must not refresh the
	// slot it cached in the old table.
	lone.learnCached(a, 1, now, &lc)
	if lc.src == nil {
		t.Fatal("learnCached did not cache a known station's slot")
	}
	lold = lone.tab.Load()
	lone.sweepLocked(now)
	lone.learnCached(a, 1, now, &lc)
	if lone.tab.Load() == lold || lc.tab != lone.tab.Load() {
		t.Fatal("learnCached kept using a slot of a swept table")
	}
	step("b back", b, 2, a)
	step("a again after the sweep", a, 1, b)
	// b ages out of the table the cached slot belongs to: a sweep
	// copies it still live, a's next frame caches its new slot, and no
	// sweep runs again before b's AgeTime.
	seenB := now
	now = seenB + age*9/10
	step("sweep with b still live", a, 1, b)
	now = seenB + age + 2*unit
	step("b aged in the cached slot", a, 1, b)
	if _, ok := cached.lookup(b, now); ok {
		t.Fatal("b still live after its AgeTime")
	}
	now += 2 * age
	step("everything aged", a, 1, b)
}
