//go:build !mips && !mipsle

package clock

import (
	"testing"
	"time"
)

// The sim clock moves only its own view of the time.
func TestSimStepAndSlew(t *testing.T) {
	c := NewSystem()
	if c.Synced() {
		t.Fatal("synced at start")
	}
	if d := c.Now().Sub(time.Now()); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("a fresh sim clock is %v off the host", d)
	}
	target := time.Date(2035, 6, 1, 0, 0, 0, 0, time.UTC)
	if err := c.Step(target); err != nil {
		t.Fatal(err)
	}
	if d := c.Now().Sub(target); d < 0 || d > 50*time.Millisecond {
		t.Fatalf("after Step the clock is %v off the target", d)
	}
	if host := time.Now(); host.Year() == 2035 {
		t.Fatal("the host clock moved")
	}
	if !c.Synced() {
		t.Fatal("not synced after Step")
	}

	// Slew 10 ms forward: after ~200 ms about 100 µs is applied, never more
	// than 500 ppm of the elapsed time.
	// The offset at one host instant: reading c.Now and the host's clock
	// separately would add the time between the two reads, which on a
	// loaded machine is tens of microseconds.
	off := func() time.Duration { return c.offsetAt(time.Now()) }
	base := off()
	start := time.Now()
	c.Slew(10 * time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	applied := off() - base
	el := time.Since(start)
	if applied < 90*time.Microsecond || applied > el/2000+100*time.Microsecond {
		t.Fatalf("after %v of slewing %v applied", el, applied)
	}
	// A new slew keeps what was applied and replaces the rest.
	c.Slew(0)
	kept := off() - base
	time.Sleep(50 * time.Millisecond)
	if d := off() - base - kept; d < -20*time.Microsecond || d > 20*time.Microsecond {
		t.Fatalf("a cancelled slew kept moving: %v", d)
	}
}

func TestSimRestoreMovesOnlyForward(t *testing.T) {
	c := NewSystem()
	future := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	got, err := c.Restore(&memStore{data: Encode(future)})
	if err != nil || !got.Equal(future) {
		t.Fatal(got, err)
	}
	if d := c.Now().Sub(future); d < 0 || d > time.Second {
		t.Fatalf("restored clock %v off the saved time", d)
	}
	if c.Synced() {
		t.Fatal("a restored clock claims to be synced")
	}
	c2 := NewSystem()
	if _, err := c2.Restore(&memStore{data: Encode(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC))}); err != nil {
		t.Fatal(err)
	}
	if d := c2.Now().Sub(time.Now()); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("an older saved time moved the clock by %v", d)
	}
}
