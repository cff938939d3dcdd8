package firmware

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/sys/event"
	"github.com/gowrt/gowrt/sys/supervisor"
)

// fakeWatchdog is a board watchdog that clamps timeouts to max and
// records what the firmware does with it.
type fakeWatchdog struct {
	max time.Duration
	err error

	mu       sync.Mutex
	armed    time.Duration
	pets     int
	disarms  int
	lastPet  time.Time
	armCalls int
}

func (w *fakeWatchdog) Arm(d time.Duration) (time.Duration, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armCalls++
	if w.err != nil {
		return 0, w.err
	}
	w.armed = min(d, w.max)
	w.lastPet = time.Now()
	return w.armed, nil
}

func (w *fakeWatchdog) Pet() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pets++
	w.lastPet = time.Now()
}

func (w *fakeWatchdog) Disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = 0
	w.disarms++
}

func (w *fakeWatchdog) state() (armed time.Duration, pets, disarms int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armed, w.pets, w.disarms
}

// waitPets waits until the watchdog has been petted more than n times.
func waitPets(t *testing.T, w *fakeWatchdog, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, p, _ := w.state(); p > n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watchdog petted %d times, waited for more than %d", n, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// assertNoPets checks that no pet comes for several pet intervals.
func assertNoPets(t *testing.T, w *fakeWatchdog, what string) {
	t.Helper()
	_, before, _ := w.state()
	time.Sleep(w.max) // six intervals
	if _, after, _ := w.state(); after != before {
		t.Fatalf("%s: watchdog petted %d times", what, after-before)
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// critical runs until stopped, or fails at once while failing is set.
type critical struct {
	mu      sync.Mutex
	failing bool
}

func (c *critical) run(ctx context.Context) error {
	c.mu.Lock()
	f := c.failing
	c.mu.Unlock()
	if f {
		return errors.New("broken")
	}
	<-ctx.Done()
	return nil
}

// TestWatchdogPetsWhileHealthy: armed with the board's clamped timeout,
// petted every sixth of it while the critical service runs; a parked
// critical service stops the pets; restarting it resumes them; a clean
// stop disarms.
func TestWatchdogPetsWhileHealthy(t *testing.T) {
	sup := supervisor.New(quietLog(), event.NewBus())
	c := &critical{}
	if err := sup.Add(supervisor.Service{Name: "vital", Restart: supervisor.Always, Run: c.run,
		MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond, CrashLoop: 2}); err != nil {
		t.Fatal(err)
	}
	wd := &fakeWatchdog{max: 300 * time.Millisecond}
	if err := sup.Add(supervisor.Service{Name: svcWatchdog, Restart: supervisor.Always,
		Run: func(ctx context.Context) error {
			return runWatchdog(ctx, wd, sup, watchdogTimeout, []string{"vital"}, quietLog())
		}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitPets(t, wd, 3)
	if armed, _, _ := wd.state(); armed != wd.max {
		t.Fatalf("armed %v, want the board's clamp %v", armed, wd.max)
	}
	// Pets come well within the armed timeout.
	for i := 0; i < 20; i++ {
		wd.mu.Lock()
		late := time.Since(wd.lastPet)
		wd.mu.Unlock()
		if late > wd.max {
			t.Fatalf("no pet for %v with a %v timeout", late, wd.max)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// The critical service crash-loops and is parked: no more pets.
	c.mu.Lock()
	c.failing = true
	c.mu.Unlock()
	if err := sup.RestartService("vital"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for stateOf(sup, "vital") != supervisor.StateParked {
		if time.Now().After(deadline) {
			t.Fatalf("vital is %s, never parked", stateOf(sup, "vital"))
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(wd.max / 3) // a tick already under way may still pet
	assertNoPets(t, wd, "critical service parked")

	c.mu.Lock()
	c.failing = false
	c.mu.Unlock()
	if err := sup.StartService("vital"); err != nil {
		t.Fatal(err)
	}
	_, p, _ := wd.state()
	waitPets(t, wd, p+2)

	if err := sup.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if armed, _, disarms := wd.state(); armed != 0 || disarms != 1 {
		t.Fatalf("after a clean stop: armed %v, %d disarms", armed, disarms)
	}
}

func stateOf(sup *supervisor.Supervisor, name string) string {
	for _, s := range sup.Status() {
		if s.Name == name {
			return s.State
		}
	}
	return ""
}

// wedgeable is a supervisor whose Status can hang, as a deadlocked one
// would.
type wedgeable struct {
	mu      sync.Mutex
	wedged  chan struct{} // non-nil: Status blocks until it is closed
	healthy []supervisor.Status
}

func (w *wedgeable) Status() []supervisor.Status {
	w.mu.Lock()
	c := w.wedged
	w.mu.Unlock()
	if c != nil {
		<-c
	}
	return w.healthy
}

// TestWatchdogStopsWhenSupervisorWedged: each pet needs the supervisor to
// answer; while it does not, the board is not petted.
func TestWatchdogStopsWhenSupervisorWedged(t *testing.T) {
	sup := &wedgeable{healthy: []supervisor.Status{{Name: "vital", State: supervisor.StateRunning}}}
	wd := &fakeWatchdog{max: 300 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runWatchdog(ctx, wd, sup, watchdogTimeout, []string{"vital"}, quietLog()) }()
	waitPets(t, wd, 2)

	block := make(chan struct{})
	sup.mu.Lock()
	sup.wedged = block
	sup.mu.Unlock()
	time.Sleep(wd.max / 3)
	assertNoPets(t, wd, "supervisor wedged")

	sup.mu.Lock()
	sup.wedged = nil
	sup.mu.Unlock()
	close(block)
	_, p, _ := wd.state()
	waitPets(t, wd, p+2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWatchdogArmFails: a board that cannot arm its watchdog fails the
// service (the supervisor retries and parks it), and nothing is petted.
func TestWatchdogArmFails(t *testing.T) {
	wd := &fakeWatchdog{max: time.Second, err: errors.New("no clock")}
	err := runWatchdog(context.Background(), wd, &wedgeable{}, watchdogTimeout, nil, quietLog())
	if err == nil {
		t.Fatal("arm failure not reported")
	}
	if _, p, _ := wd.state(); p != 0 {
		t.Fatal("petted a watchdog that was not armed")
	}
}

func TestUnhealthy(t *testing.T) {
	st := []supervisor.Status{
		{Name: "a", State: supervisor.StateRunning},
		{Name: "b", State: supervisor.StateBackoff},
		{Name: "c", State: supervisor.StateParked},
		{Name: "d", State: supervisor.StateFailed},
		{Name: "e", State: supervisor.StateStopped},
	}
	for _, tc := range []struct {
		critical []string
		want     string
	}{
		{[]string{"a", "b", "e"}, ""},
		{[]string{"a", "c"}, "c parked"},
		{[]string{"d", "x"}, "d failed, x missing"},
	} {
		if got := unhealthy(st, tc.critical); got != tc.want {
			t.Errorf("unhealthy(%v) = %q, want %q", tc.critical, got, tc.want)
		}
	}
}
