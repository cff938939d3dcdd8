package powersave_test

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gowrt/gowrt/powersave"
)

// chip models a device that returns 0xdeadbeef for register reads while
// asleep, as Atheros MACs do.
type chip struct {
	mu     sync.Mutex
	awake  bool
	value  uint32
	wakes  int
	sleeps int
}

func (c *chip) Wake() error  { c.mu.Lock(); c.awake = true; c.wakes++; c.mu.Unlock(); return nil }
func (c *chip) Sleep() error { c.mu.Lock(); c.awake = false; c.sleeps++; c.mu.Unlock(); return nil }
func (c *chip) Read() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.awake {
		return 0xdeadbeef
	}
	return c.value
}

// naive is the scheme the refcount replaces: wake on entry, sleep on exit.
type naive struct{ c *chip }

func (n naive) Wake() error    { return n.c.Wake() }
func (n naive) Release() error { return n.c.Sleep() }

type waker interface {
	Wake() error
	Release() error
}

// interleave runs two users' steps in a seeded order: A wakes, reads,
// reads, releases; B does the same. It returns how many reads saw garbage.
func interleave(w waker, c *chip, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 1))
	type step int
	const (
		wake step = iota
		read
		release
	)
	prog := []step{wake, read, read, release}
	pc := [2]int{}
	bad := 0
	for pc[0] < len(prog) || pc[1] < len(prog) {
		u := rng.IntN(2)
		if pc[u] == len(prog) {
			u = 1 - u
		}
		switch prog[pc[u]] {
		case wake:
			_ = w.Wake()
		case read:
			if c.Read() == 0xdeadbeef {
				bad++
			}
		case release:
			_ = w.Release()
		}
		pc[u]++
	}
	return bad
}

// TestHazardAccessWhileAsleep: thread A wakes the chip and works, thread B
// finishes and puts it to sleep, A reads garbage. Explored over seeded
// interleavings: the naive scheme is caught, the refcounted Domain never.
func TestHazardAccessWhileAsleep(t *testing.T) {
	caught := false
	for seed := uint64(0); seed < 200; seed++ {
		c := &chip{value: 7}
		if interleave(naive{c}, c, seed) > 0 {
			caught = true
		}
		c2 := &chip{value: 7}
		d := powersave.New("ath0", c2)
		if bad := interleave(d, c2, seed); bad != 0 {
			t.Fatalf("seed %d: refcounted domain let %d reads hit a sleeping chip", seed, bad)
		}
		if d.Holds() != 0 || c2.awake {
			t.Fatalf("seed %d: chip left awake with %d holds", seed, d.Holds())
		}
	}
	if !caught {
		t.Fatal("the naive scheme was never caught reading a sleeping chip")
	}
}

// TestConcurrentHolders hammers a Domain from many goroutines (run with
// -race): no read may see a sleeping chip.
func TestConcurrentHolders(t *testing.T) {
	c := &chip{value: 1}
	d := powersave.New("ath0", c)
	var wg sync.WaitGroup
	var bad sync.Map
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				_ = d.Do(func() error {
					if c.Read() == 0xdeadbeef {
						bad.Store(g, true)
					}
					return nil
				})
			}
		}(g)
	}
	wg.Wait()
	bad.Range(func(k, _ any) bool { t.Errorf("goroutine %v read a sleeping chip", k); return true })
	if d.Holds() != 0 || c.awake {
		t.Fatal("chip left awake")
	}
}

func TestReleaseWithoutWake(t *testing.T) {
	c := &chip{}
	d := powersave.New("ath0", c)
	if err := d.Release(); !errors.Is(err, powersave.ErrNotAwake) {
		t.Fatalf("Release without Wake: %v", err)
	}
	if c.sleeps != 0 || d.Holds() != 0 {
		t.Fatal("a bad Release changed state")
	}
}

type failing struct{ chip }

func (f *failing) Wake() error { return errors.New("no clock") }

func TestWakeFailureTakesNoHold(t *testing.T) {
	d := powersave.New("ath0", &failing{})
	if err := d.Wake(); err == nil {
		t.Fatal("wake failure not reported")
	}
	if d.Holds() != 0 {
		t.Fatal("failed Wake took a hold")
	}
}

func TestCloseAndReopen(t *testing.T) {
	c := &chip{}
	d := powersave.New("ath0", c)
	_ = d.Wake()
	if err := d.Close(false); err == nil {
		t.Fatal("Close with a hold succeeded without force")
	}
	if err := d.Close(true); err != nil || c.awake {
		t.Fatalf("forced Close: %v, awake=%v", err, c.awake)
	}
	if err := d.Wake(); err == nil {
		t.Fatal("Wake after Close succeeded")
	}
	d.Reopen()
	if err := d.Do(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if w, s := d.Counts(); w != 2 || s != 2 {
		t.Fatalf("counts wakes=%d sleeps=%d", w, s)
	}
}
