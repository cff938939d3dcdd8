package power

import (
	"errors"
	"math/rand"
	"runtime"
	"sync"
	"testing"

	"github.com/gowrt/gowrt/ath/athsim"
)

// shaker returns a Yield hook that, driven by a seeded RNG, yields the
// processor after some register accesses so goroutines interleave in
// many different ways (the seed makes the pattern, not the schedule,
// reproducible; the Go scheduler still decides the rest).
func shaker(seed int64) func() {
	var mu sync.Mutex
	r := rand.New(rand.NewSource(seed))
	return func() {
		mu.Lock()
		n := r.Intn(4)
		mu.Unlock()
		for i := 0; i < n; i++ {
			runtime.Gosched()
		}
	}
}

// naive is the scheme the hazard is about: every path wakes the chip on
// entry and puts it to sleep on exit, without counting the other paths.
type naive struct {
	c *Chip
}

func (n naive) Do(f func() error) error {
	if err := n.c.program(Awake); err != nil {
		return err
	}
	err := f()
	n.c.program(n.c.Target())
	return err
}

type doer interface{ Do(func() error) error }

// work is a register-touching path: it reads MAC/PCU registers that only
// answer while the chip is awake and reports any 0xdeadbeef it sees.
func work(d doer, regs Regs, bad *int) error {
	return d.Do(func() error {
		for i := 0; i < 4; i++ {
			if regs.Read32(athsim.RegSTAID0) == athsim.Dead || regs.Read32(athsim.RegTSFL32) == athsim.Dead {
				*bad++
			}
		}
		return nil
	})
}

// race runs two paths (A and B) concurrently, each iters times.
func race(t *testing.T, seed int64, iters int, mk func(c *Chip) doer) (deadA, deadB int, chip *athsim.Chip) {
	chip = athsim.New()
	chip.WakePolls = 2
	chip.Yield = shaker(seed)
	c := New("ath0", chip)
	d := mk(c)
	var wg sync.WaitGroup
	wg.Add(2)
	var errA, errB error
	go func() {
		defer wg.Done()
		for i := 0; i < iters && errA == nil; i++ {
			errA = work(d, chip, &deadA)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < iters && errB == nil; i++ {
			errB = work(d, chip, &deadB)
		}
	}()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("seed %d: %v / %v", seed, errA, errB)
	}
	return deadA, deadB, chip
}

// TestHazardSleepWhileAnotherPathWorks is the powersave race: thread A
// wakes the chip, works, drops its lock; thread B finishes its own work
// and puts the chip to sleep; A continues and reads 0xdeadbeef. The naive
// wake/sleep-per-path scheme must be caught by the model; the refcounted
// Domain must never let a read see a sleeping chip, over many seeds.
func TestHazardSleepWhileAnotherPathWorks(t *testing.T) {
	seeds, iters := int64(40), 50
	if testing.Short() {
		seeds = 10
	}
	caught := 0
	for s := int64(1); s <= seeds && caught == 0; s++ {
		a, b, chip := race(t, s, iters, func(c *Chip) doer { return naive{c} })
		if _, dead := chip.Violations(); dead > 0 && a+b > 0 {
			caught++
		}
	}
	if caught == 0 {
		t.Error("the model never caught the non-refcounted scheme reading a sleeping chip")
	}
	for s := int64(1); s <= seeds; s++ {
		a, b, chip := race(t, s, iters, func(c *Chip) doer { return c })
		if tot, dead := chip.Violations(); tot != 0 || a+b != 0 {
			t.Fatalf("seed %d: refcounted scheme: %d violations, %d dead reads (A %d, B %d)", s, tot, dead, a, b)
		}
		if st := chip.State(); st != athsim.Sleep {
			t.Errorf("seed %d: chip left %v after all paths released, want network sleep", s, st)
		}
	}
}

// TestHazardReadBeforeWakeComplete: the chip reports WAKEUP for a while
// after force-wake; reading the MAC before RTC status says ON returns
// 0xdeadbeef. The wake sequence polls; a driver that does not is caught.
func TestHazardReadBeforeWakeComplete(t *testing.T) {
	chip := athsim.New()
	chip.WakePolls = 5
	// Wrong: out of reset, force-wake, read at once.
	chip.Write32(athsim.RegRTCReset, athsim.RTCResetEn)
	chip.Write32(athsim.RegRTCForceWake, athsim.ForceWakeEn)
	if v := chip.Read32(athsim.RegSTAID0); v != athsim.Dead {
		t.Errorf("read right after force-wake returned %#x, want the model to answer 0xdeadbeef", v)
	}
	chip = athsim.New()
	chip.WakePolls = 5
	c := New("ath0", chip)
	err := c.Do(func() error {
		if v := chip.Read32(athsim.RegSTAID0); v != 0x33221100 {
			t.Errorf("STA_ID0 = %#x while held awake", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tot, _ := chip.Violations(); tot != 0 {
		t.Errorf("%d violations with the polling wake sequence", tot)
	}
}

// TestHazardFullSleepNeedsRTCReset: from full sleep the RTC is held in
// reset and force-wake alone does nothing. The wake sequence takes the RTC
// out of reset first.
func TestHazardFullSleepNeedsRTCReset(t *testing.T) {
	chip := athsim.New() // full sleep (SHUTDOWN)
	chip.Write32(athsim.RegRTCForceWake, athsim.ForceWakeEn)
	for i := 0; i < 10; i++ {
		chip.Read32(athsim.RegRTCStatus)
	}
	if chip.State() != athsim.Shutdown || chip.Read32(athsim.RegIMR) != athsim.Dead {
		t.Fatalf("force-wake from SHUTDOWN woke the model (%v)", chip.State())
	}
	if tot, dead := chip.Violations(); tot != 1 || dead != 1 {
		t.Fatalf("model counted %d violations (%d dead reads), want 1", tot, dead)
	}
	c := New("ath0", athsim.New())
	if err := c.Hold(); err != nil {
		t.Fatalf("wake from full sleep: %v", err)
	}
	if c.Current() != Awake {
		t.Errorf("current %v", c.Current())
	}
	c.Release()
}

func TestWakeFailure(t *testing.T) {
	chip := athsim.New()
	chip.RefuseWakes = WakePolls + 10
	c := New("ath0", chip)
	if err := c.Hold(); !errors.Is(err, ErrNoWake) {
		t.Fatalf("Hold on a chip that never wakes: %v", err)
	}
	if c.Holds() != 0 {
		t.Errorf("failed wake left %d holds", c.Holds())
	}
	// A chip that refuses a few times then wakes is fine (re-assertion).
	chip = athsim.New()
	chip.RefuseWakes = 3
	c = New("ath0", chip)
	if err := c.Do(func() error { return nil }); err != nil {
		t.Fatalf("chip refusing 3 wakes: %v", err)
	}
}

func TestLifecycle(t *testing.T) {
	chip := athsim.New()
	c := New("ath0", chip)
	// Idle: network sleep after the first use.
	if err := c.Do(func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if chip.State() != athsim.Sleep || c.Current() != NetworkSleep {
		t.Fatalf("idle state %v / %v", chip.State(), c.Current())
	}
	if chip.Peek(athsim.RegSTAID1)&athsim.STAID1PwrSav == 0 {
		t.Error("PWR_SAV not set in network sleep")
	}
	// While held, the target change waits; at release it applies.
	if err := c.Hold(); err != nil {
		t.Fatal(err)
	}
	if chip.Peek(athsim.RegSTAID1)&athsim.STAID1PwrSav != 0 {
		t.Error("PWR_SAV still set while awake")
	}
	if err := c.AllVAPsDown(); err != nil {
		t.Fatal(err)
	}
	if chip.State() != athsim.Awake {
		t.Fatalf("target change slept a held chip: %v", chip.State())
	}
	c.Release()
	if chip.State() != athsim.Shutdown || c.Current() != FullSleep {
		t.Fatalf("all VAPs down: %v / %v, want full sleep", chip.State(), c.Current())
	}
	// A VAP coming up: the next idle period is network sleep again.
	if err := c.VAPUp(); err != nil {
		t.Fatal(err)
	}
	if chip.State() != athsim.Sleep {
		t.Fatalf("VAP up: %v", chip.State())
	}
	// Reset wakes the chip for its sequence.
	err := c.Reset(func(r Regs) error {
		if chip.State() != athsim.Awake {
			t.Errorf("reset ran with the chip %v", chip.State())
		}
		r.Write32(athsim.RegIMR, 0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Suspend refuses while a path holds the chip, then powers it off.
	c.Hold()
	if err := c.Suspend(); err == nil {
		t.Error("suspend with a holder succeeded")
	}
	c.Release()
	if err := c.Suspend(); err != nil {
		t.Fatal(err)
	}
	if chip.State() != athsim.Shutdown {
		t.Fatalf("suspend: %v", chip.State())
	}
	if err := c.Hold(); err == nil {
		t.Error("Hold while suspended succeeded")
	}
	c.Resume()
	if err := c.Do(func() error { return nil }); err != nil {
		t.Fatalf("after resume: %v", err)
	}
	// Detach powers off even with holders.
	c.Hold()
	if err := c.Detach(); err != nil {
		t.Fatal(err)
	}
	if chip.State() != athsim.Shutdown {
		t.Fatalf("detach: %v", chip.State())
	}
	if err := c.SetTarget(Awake); err == nil {
		t.Error("idle target AWAKE accepted")
	}
	if tot, _ := chip.Violations(); tot != 0 {
		t.Errorf("%d violations over the lifecycle", tot)
	}
}
