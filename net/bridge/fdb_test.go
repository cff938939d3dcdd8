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
		_, ok := f.learnLookup(0, false, 0, key, true, now)
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
