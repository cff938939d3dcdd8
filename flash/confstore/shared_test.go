package confstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/flash/confstore"
	"github.com/gowrt/gowrt/sys/clock"
	"github.com/gowrt/gowrt/sys/event"
)

// leaseBlob is a lease table shaped like dhcpd's (one text line per lease:
// state, expiry, MAC, address, hostname), n leases long.
func leaseBlob(n, gen int) []byte {
	var b bytes.Buffer
	b.WriteString("gowrt-leases 1\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "b %d 52:54:00:00:%02x:%02x 192.168.1.%d host-%d-%d\n",
			1764600000+gen*100+i, i>>8, i&0xff, 100+i%150, gen, i)
	}
	return b.Bytes()
}

var (
	t1 = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	t2 = t1.Add(time.Hour)
)

// share opens the rig's store and shares it, with the lease and time keys.
func share(t *testing.T, r *rig) (*confstore.Store, *confstore.Shared, *confstore.Key, *confstore.Key) {
	t.Helper()
	s, v, err := r.open(t)
	if err != nil {
		t.Fatal(err)
	}
	sh := confstore.Share(s, v)
	leases, err := sh.Key("dhcp.leases")
	if err != nil {
		t.Fatal(err)
	}
	tm, err := sh.Key("clock.time")
	if err != nil {
		t.Fatal(err)
	}
	return s, sh, leases, tm
}

func mustLoad(t *testing.T, k *confstore.Key) []byte {
	t.Helper()
	b, err := k.Load()
	if err != nil {
		t.Fatalf("load %s: %v", k.Name(), err)
	}
	return b
}

// TestSharedKeys: two services' values, one of them several records
// long, and a plain configuration key share one store and survive a
// reboot; nothing saved reads as nil, nil.
func TestSharedKeys(t *testing.T) {
	for _, be := range []bool{false, true} {
		r := boot(t, 1, be, nil)
		s, _, _ := r.open(t)
		if err := s.Save(confstore.Values{"lan.ipaddr": "10.0.0.1"}); err != nil {
			t.Fatal(err)
		}
		r = boot(t, 2, be, r.sim.Image())
		_, sh, leases, tm := share(t, r)
		if b, err := leases.Load(); b != nil || err != nil {
			t.Fatalf("nothing saved: %q %v", b, err)
		}
		lb := leaseBlob(50, 1) // 2.7 KiB: three records
		if len(lb) <= 2*confstore.MaxValue {
			t.Fatalf("lease blob of %d bytes does not span three records", len(lb))
		}
		e0 := r.chip.Stats.Erases
		if err := leases.Save(lb); err != nil {
			t.Fatal(err)
		}
		if err := tm.Save(clock.Encode(t1)); err != nil {
			t.Fatal(err)
		}
		if e := r.chip.Stats.Erases - e0; e != 2 {
			t.Errorf("two saves cost %d erases, want 2", e)
		}
		if st := sh.Stats(); st.Saves != 2 || st.Failures != 0 {
			t.Errorf("stats %+v", st)
		}

		r2 := boot(t, 3, be, r.sim.Image())
		_, v, err := r2.open(t)
		if err != nil {
			t.Fatal(err)
		}
		if v["lan.ipaddr"] != "10.0.0.1" || v["dhcp.leases#2"] == "" || v["dhcp.leases#3"] != "" {
			t.Fatalf("records after reboot: %d keys, lan.ipaddr %q, chunk 2 %d bytes", len(v), v["lan.ipaddr"], len(v["dhcp.leases#2"]))
		}
		_, _, leases2, tm2 := share(t, r2)
		if got := mustLoad(t, leases2); !bytes.Equal(got, lb) {
			t.Fatalf("leases after reboot: %d bytes, want %d", len(got), len(lb))
		}
		if got, err := clock.Decode(mustLoad(t, tm2)); err != nil || !got.Equal(t1) {
			t.Fatalf("time after reboot: %v %v", got, err)
		}

		// A shorter table drops the records it no longer needs.
		short := leaseBlob(3, 2)
		if err := leases2.Save(short); err != nil {
			t.Fatal(err)
		}
		r3 := boot(t, 4, be, r2.sim.Image())
		_, v, _ = r3.open(t)
		if len(v) != 3 || v["dhcp.leases"] != string(short) {
			t.Fatalf("after a shorter save: %d keys %v", len(v), v)
		}
		for _, m := range r.sys.Misuses() {
			t.Error(m)
		}
	}
}

// TestSharedUnchanged: saving the bytes a key already holds writes
// nothing (dhcpd's Flush at shutdown, a keeper saving the same second).
func TestSharedUnchanged(t *testing.T) {
	r := boot(t, 1, false, nil)
	_, sh, leases, _ := share(t, r)
	lb := leaseBlob(20, 1)
	if err := leases.Save(lb); err != nil {
		t.Fatal(err)
	}
	e0, w0 := r.chip.Stats.Erases, r.sim.Writes()
	if err := leases.Save(append([]byte(nil), lb...)); err != nil {
		t.Fatal(err)
	}
	if r.chip.Stats.Erases != e0 || r.sim.Writes() != w0 {
		t.Fatal("an unchanged value was written")
	}
	if st := sh.Stats(); st.Saves != 1 || st.Skipped != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestSharedFull: a lease table larger than the slot is refused with
// ErrTooLarge before the flash is touched, counted, and leaves the old
// table in place; the other key keeps saving.
func TestSharedFull(t *testing.T) {
	r := boot(t, 1, true, nil)
	_, sh, leases, tm := share(t, r)
	small := leaseBlob(10, 1)
	if err := leases.Save(small); err != nil {
		t.Fatal(err)
	}
	big := leaseBlob(150, 2) // ~9 KiB, the slot is 4 KiB
	e0 := r.chip.Stats.Erases
	err := leases.Save(big)
	if !errors.Is(err, confstore.ErrTooLarge) {
		t.Fatalf("oversized save: %v", err)
	}
	t.Logf("oversized save: %v", err)
	if r.chip.Stats.Erases != e0 {
		t.Error("a refused save erased the flash")
	}
	if got := mustLoad(t, leases); !bytes.Equal(got, small) {
		t.Fatal("a refused save changed the value in memory")
	}
	if err := tm.Save(clock.Encode(t1)); err != nil {
		t.Fatalf("the time key after the lease table did not fit: %v", err)
	}
	if st := sh.Stats(); st.Saves != 2 || st.Failures != 1 {
		t.Fatalf("stats %+v", st)
	}
	r2 := boot(t, 2, true, r.sim.Image())
	_, _, leases2, tm2 := share(t, r2)
	if got := mustLoad(t, leases2); !bytes.Equal(got, small) {
		t.Fatal("reboot: lease table is not the last one that fit")
	}
	if got, err := clock.Decode(mustLoad(t, tm2)); err != nil || !got.Equal(t1) {
		t.Fatalf("reboot: time %v %v", got, err)
	}
}

// TestSharedPowerCut cuts the power at every bus write of a time save
// followed by a lease save (both endians). After each cut the pair read
// back is one the saves passed through — (old, old), (old leases, new
// time) or (new, new) — never a mix of records, and what a Save reported
// done is there.
func TestSharedPowerCut(t *testing.T) {
	l1, l2 := leaseBlob(30, 1), leaseBlob(40, 2)
	for _, be := range []bool{false, true} {
		r := boot(t, 1, be, nil)
		_, _, leases, tm := share(t, r)
		if err := leases.Save(l1); err != nil {
			t.Fatal(err)
		}
		if err := tm.Save(clock.Encode(t1)); err != nil {
			t.Fatal(err)
		}
		base := r.sim.Image()

		saveBoth := func(leases, tm *confstore.Key) (timeDone, leasesDone bool) {
			if tm.Save(clock.Encode(t2)) != nil {
				return false, false
			}
			return true, leases.Save(l2) == nil
		}
		r = boot(t, 1, be, base)
		_, _, leases, tm = share(t, r)
		w0 := r.sim.Writes()
		if a, b := saveBoth(leases, tm); !a || !b {
			t.Fatal("uncut saves failed")
		}
		total := r.sim.Writes() - w0

		outcomes := map[string]int{}
		for k := uint64(1); k <= total; k++ {
			r := boot(t, k, be, base)
			_, _, leases, tm := share(t, r)
			r.sim.CutPowerAfter(k)
			timeDone, leasesDone := saveBoth(leases, tm)

			r2 := boot(t, k+1000, be, r.sim.Image())
			_, sh2, leases2, tm2 := share(t, r2)
			lb := mustLoad(t, leases2)
			at, err := clock.Decode(mustLoad(t, tm2))
			if err != nil {
				t.Fatalf("cut at %d: time record: %v", k, err)
			}
			var got string
			switch {
			case bytes.Equal(lb, l1) && at.Equal(t1):
				got = "old,old"
			case bytes.Equal(lb, l1) && at.Equal(t2):
				got = "old leases,new time"
			case bytes.Equal(lb, l2) && at.Equal(t2):
				got = "new,new"
			default:
				t.Fatalf("be=%v cut at %d/%d: leases %d bytes, time %v", be, k, total, len(lb), at)
			}
			outcomes[got]++
			if timeDone && !at.Equal(t2) || leasesDone && !bytes.Equal(lb, l2) {
				t.Fatalf("cut at %d: a save reported done is not on flash (%s)", k, got)
			}
			// The store keeps working after the cut.
			if err := leases2.Save(leaseBlob(5, 3)); err != nil {
				t.Fatalf("cut at %d: save after reboot: %v", k, err)
			}
			if st := sh2.Stats(); st.Saves != 1 {
				t.Fatalf("cut at %d: stats %+v", k, st)
			}
		}
		if len(outcomes) != 3 {
			t.Fatalf("be=%v: cut points did not reach every outcome: %v", be, outcomes)
		}
		t.Logf("be=%v: %d bus writes for both saves, cut after each: %v", be, total, outcomes)
	}
}

// TestSharedKeyNames: names the chunk records could collide with are
// refused.
func TestSharedKeyNames(t *testing.T) {
	r := boot(t, 1, false, nil)
	s, v, _ := r.open(t)
	sh := confstore.Share(s, v)
	for _, n := range []string{"", "a#1", "a b", "a=b", string(bytes.Repeat([]byte{'k'}, confstore.MaxKey-3))} {
		if _, err := sh.Key(n); !errors.Is(err, confstore.ErrKeyName) {
			t.Errorf("Key(%q): %v", n, err)
		}
	}
	if _, err := sh.Key(string(bytes.Repeat([]byte{'k'}, confstore.MaxKey-4))); err != nil {
		t.Error(err)
	}
}

// TestSharedGap: continuation records Save did not write (a gap, or no
// first record) are reported, not glued together.
func TestSharedGap(t *testing.T) {
	r := boot(t, 1, false, nil)
	s, _, _ := r.open(t)
	for _, v := range []confstore.Values{
		{"dhcp.leases": "a", "dhcp.leases#2": "c"},
		{"dhcp.leases#1": "b"},
	} {
		k, _ := confstore.Share(s, v).Key("dhcp.leases")
		if b, err := k.Load(); !errors.Is(err, confstore.ErrFormat) {
			t.Errorf("%v: Load %q %v", v, b, err)
		}
	}
}

// fakeClock is a synced clock that reads a fixed time.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time           { return c.now }
func (c *fakeClock) Step(time.Time) error     { return nil }
func (c *fakeClock) Slew(time.Duration) error { return nil }
func (c *fakeClock) Synced() bool             { return true }

// TestSharedClockKeeper: the clock's Keeper, given a Key as its store,
// saves the time at the first sync; after a reboot the key holds it.
// (The router's TimeStore is such a Key on malta; the QEMU tests have no
// time server, so the sync is played here.)
func TestSharedClockKeeper(t *testing.T) {
	r := boot(t, 1, true, nil)
	_, _, _, tm := share(t, r)
	k := &clock.Keeper{Clock: &fakeClock{now: t1}, Store: tm}
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan event.TimeSynced, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = k.Run(ctx, synced) }()
	synced <- event.TimeSynced{Stepped: true, Server: "test"}
	deadline := time.Now().Add(5 * time.Second)
	for ok, _ := k.Saves(); ok == 0 && time.Now().Before(deadline); ok, _ = k.Saves() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	if ok, failed := k.Saves(); ok == 0 || failed != 0 {
		t.Fatalf("keeper saves: %d ok, %d failed", ok, failed)
	}
	r2 := boot(t, 2, true, r.sim.Image())
	_, _, _, tm2 := share(t, r2)
	if got, err := clock.Decode(mustLoad(t, tm2)); err != nil || !got.Equal(t1) {
		t.Fatalf("saved time after reboot: %v %v", got, err)
	}
}

// FuzzSharedLoad: whatever configuration a copy decodes to, a key's Load
// returns a value or an error, never panics, and a value it returns saves
// and loads back unchanged.
func FuzzSharedLoad(f *testing.F) {
	for _, v := range []confstore.Values{
		{"dhcp.leases": "a", "dhcp.leases#1": "b", "dhcp.leases#2": "c"},
		{"dhcp.leases": "a", "dhcp.leases#2": "c"},
		{"dhcp.leases#1": "b", "clock.time": "t"},
		{"dhcp.leases": "x", "dhcp.leases#x": "y", "dhcp.leases#-1": "z", "dhcp.leases#99999999999999999999": "w"},
	} {
		b, _ := confstore.Encode(v, 1)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, copyBytes []byte) {
		_, v, err := confstore.Decode(copyBytes)
		if err != nil {
			return
		}
		r := boot(t, 1, false, nil)
		s, _, _ := r.open(t)
		k, err := confstore.Share(s, v).Key("dhcp.leases")
		if err != nil {
			t.Fatal(err)
		}
		b, err := k.Load()
		if err != nil || b == nil {
			return
		}
		next := append([]byte(nil), b...)
		next = append(next, '!')
		if err := k.Save(next); err != nil {
			if errors.Is(err, confstore.ErrTooLarge) {
				return
			}
			t.Fatal(err)
		}
		if got, err := k.Load(); err != nil || !bytes.Equal(got, next) {
			t.Fatalf("after save: %q %v", got, err)
		}
	})
}
