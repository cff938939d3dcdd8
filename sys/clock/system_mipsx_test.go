//go:build mips || mipsle

package clock

import (
	"sync"
	"testing"
	"time"
)

// The kernel clock's logic with the system call replaced: never set the
// clock of the machine the tests run on (qemu-user passes clock_settime
// through to the host).
type recorder struct {
	mu     sync.Mutex
	deltas []time.Duration // set: requested time minus time.Now(); adjust: the offset
}

func newRecorded() (*System, *recorder) {
	r := &recorder{}
	return &System{set: r.set, adjust: r.adjust}, r
}

func (r *recorder) adjust(d time.Duration) error {
	r.mu.Lock()
	r.deltas = append(r.deltas, d)
	r.mu.Unlock()
	return nil
}

func (r *recorder) set(t time.Time) error {
	r.mu.Lock()
	r.deltas = append(r.deltas, t.Sub(time.Now()))
	r.mu.Unlock()
	return nil
}

func (r *recorder) get() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.deltas...)
}

func TestKernelClockStep(t *testing.T) {
	c, r := newRecorded()
	target := time.Now().Add(time.Hour)
	if err := c.Step(target); err != nil || !c.Synced() {
		t.Fatal(err, c.Synced())
	}
	if d := r.get(); len(d) != 1 || d[0] < 59*time.Minute {
		t.Fatalf("set calls %v", d)
	}
}

func TestKernelClockSlew(t *testing.T) {
	c, r := newRecorded()
	c.Slew(-1200 * time.Microsecond)
	time.Sleep(3*slewTick + slewTick/2)
	d := r.get()
	if len(d) != 3 {
		t.Fatalf("%d steps for a 1.2 ms slew, want 3: %v", len(d), d)
	}
	want := []time.Duration{-500 * time.Microsecond, -500 * time.Microsecond, -200 * time.Microsecond}
	for i := range d {
		if d[i] != want[i] {
			t.Errorf("step %d: %v, want %v", i, d[i], want[i])
		}
	}
	// A step cancels a slew in progress.
	c2, r2 := newRecorded()
	c2.Slew(time.Second)
	c2.Step(time.Now())
	time.Sleep(slewTick + slewTick/2)
	if d := r2.get(); len(d) != 1 {
		t.Fatalf("slew went on after a step: %v", d)
	}
}

func TestKernelClockRestore(t *testing.T) {
	c, r := newRecorded()
	future := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	if _, err := c.Restore(&memStore{data: Encode(future)}); err != nil {
		t.Fatal(err)
	}
	if d := r.get(); len(d) != 1 || d[0] < 47*time.Hour || c.Synced() {
		t.Fatalf("restore: %v synced %v", d, c.Synced())
	}
}
