package clock

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

func TestSlewedRate(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		total, elapsed, want time.Duration
	}{
		{100 * time.Millisecond, 0, 0},
		{100 * time.Millisecond, -time.Second, 0},
		{100 * time.Millisecond, time.Second, 500 * time.Microsecond},
		{-100 * time.Millisecond, 10 * time.Second, -5 * time.Millisecond},
		{100 * time.Millisecond, 200 * time.Second, 100 * time.Millisecond},
		{100 * time.Millisecond, 300 * time.Second, 100 * time.Millisecond},
		{-128 * time.Millisecond, 256 * time.Second, -128 * time.Millisecond},
		{-128 * time.Millisecond, 255 * time.Second, -127500 * time.Microsecond},
	} {
		if got := slewed(c.total, start, start.Add(c.elapsed)); got != c.want {
			t.Errorf("slewed(%v after %v) = %v, want %v", c.total, c.elapsed, got, c.want)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	tm := time.Date(2031, 7, 4, 12, 0, 1, 123456789, time.UTC)
	b := Encode(tm)
	if len(b) != recordLen {
		t.Fatalf("record is %d bytes", len(b))
	}
	got, err := Decode(append(b, 0xff, 0xff, 0xff)) // erased flash after it
	if err != nil || !got.Equal(tm) {
		t.Fatalf("Decode = %v, %v; want %v", got, err, tm)
	}
	// Every single-bit flip is caught.
	for i := range b {
		for bit := 0; bit < 8; bit++ {
			c := bytes.Clone(b)
			c[i] ^= 1 << bit
			if _, err := Decode(c); err == nil {
				t.Fatalf("flip of byte %d bit %d accepted", i, bit)
			}
		}
	}
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"short", b[:23], ErrShort},
		{"erased flash", bytes.Repeat([]byte{0xff}, 64), ErrBadMagic},
		{"version 2", func() []byte { c := bytes.Clone(b); c[4] = 2; return c }(), ErrVersion},
		{"1970", Encode(time.Unix(5, 0)), ErrImplausible},
		{"2300", Encode(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)), ErrImplausible},
	} {
		if _, err := Decode(c.b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)))
	f.Add([]byte("GWTM\x01\x00\x00\x00"))
	f.Add(bytes.Repeat([]byte{0xff}, 24))
	f.Fuzz(func(t *testing.T, b []byte) {
		tm, err := Decode(b)
		if err != nil {
			return
		}
		if tm.Before(minSaved) || !tm.Before(maxSaved) {
			t.Fatalf("accepted %v", tm)
		}
		if again, err := Decode(Encode(tm)); err != nil || !again.Equal(tm) {
			t.Fatalf("re-encode of %v: %v %v", tm, again, err)
		}
	})
}

// fakeClock is a settable clock at a fixed time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	steps  []time.Time
	synced bool
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) step(to time.Time, synced bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = to
	c.steps = append(c.steps, to)
	c.synced = c.synced || synced
	return nil
}
func (c *fakeClock) Step(to time.Time) error    { return c.step(to, true) }
func (c *fakeClock) Slew(d time.Duration) error { return c.step(c.now.Add(d), true) }
func (c *fakeClock) Synced() bool               { c.mu.Lock(); defer c.mu.Unlock(); return c.synced }
func (c *fakeClock) set(now time.Time)          { c.mu.Lock(); c.now = now; c.mu.Unlock() }

type memStore struct {
	mu    sync.Mutex
	data  []byte
	err   error
	saves int
}

func (s *memStore) Load() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.data), s.err
}
func (s *memStore) Save(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = bytes.Clone(b)
	s.saves++
	return nil
}
func (s *memStore) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.saves }

func TestRestore(t *testing.T) {
	saved := time.Date(2029, 3, 1, 10, 0, 0, 0, time.UTC)
	st := &memStore{data: Encode(saved)}

	// A clock at 1970 (no RTC) moves forward to the saved time, unsynced.
	c := &fakeClock{now: time.Unix(3, 0)}
	got, err := restore(c, st)
	if err != nil || !got.Equal(saved) || !c.Now().Equal(saved) || c.Synced() {
		t.Fatalf("restore from 1970: %v %v now %v synced %v", got, err, c.Now(), c.Synced())
	}
	// A clock already later is never moved back.
	later := saved.Add(time.Hour)
	c = &fakeClock{now: later}
	if _, err := restore(c, st); err != nil || len(c.steps) != 0 || !c.Now().Equal(later) {
		t.Fatalf("restore moved a later clock: %v %v", c.steps, err)
	}
	// Corrupt or missing records are reported and change nothing.
	for _, bad := range []*memStore{{data: []byte("garbage")}, {err: errors.New("no partition")}} {
		c = &fakeClock{now: time.Unix(3, 0)}
		if _, err := restore(c, bad); err == nil || len(c.steps) != 0 {
			t.Fatalf("bad store: err %v, steps %v", err, c.steps)
		}
	}
	// An empty store (first boot) says so.
	c = &fakeClock{now: time.Unix(3, 0)}
	if _, err := restore(c, &memStore{}); !errors.Is(err, ErrNoRecord) || len(c.steps) != 0 {
		t.Fatalf("empty store: err %v, steps %v", err, c.steps)
	}
}

func TestKeeper(t *testing.T) {
	c := &fakeClock{now: time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)}
	st := &memStore{}
	k := &Keeper{Clock: c, Store: st, Period: 50 * time.Millisecond}
	synced := make(chan event.TimeSynced)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- k.Run(ctx, synced) }()

	time.Sleep(120 * time.Millisecond)
	if n := st.count(); n != 0 {
		t.Fatalf("%d saves before any sync", n)
	}
	c.Step(c.Now())
	synced <- event.TimeSynced{Step: time.Second, Stepped: true, Server: "test"}
	deadline := time.Now().Add(5 * time.Second)
	for st.count() < 3 && time.Now().Before(deadline) {
		c.set(c.Now().Add(time.Minute))
		time.Sleep(10 * time.Millisecond)
	}
	if n := st.count(); n < 3 {
		t.Fatalf("%d saves in 5 s at a 50 ms period", n)
	}
	cancel()
	<-done
	final := c.Now()
	if got, err := Decode(st.data); err != nil || !got.Equal(final) {
		t.Fatalf("last save %v %v, want the shutdown time %v", got, err, final)
	}
	if ok, failed := k.Saves(); ok != uint64(st.count()) || failed != 0 {
		t.Fatalf("Saves = %d, %d; store saw %d", ok, failed, st.count())
	}
}
