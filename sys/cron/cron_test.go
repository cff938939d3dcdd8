package cron

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/sys/clock"
)

// The system clock is what the firmware schedules by.
var _ Clock = (*clock.System)(nil)

// waitLong bounds every wait in these tests: generous, so a loaded machine
// or qemu-user cannot fail them; they normally finish at once.
const waitLong = 30 * time.Second

type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	synced bool
}

func (f *fakeClock) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
func (f *fakeClock) Synced() bool   { f.mu.Lock(); defer f.mu.Unlock(); return f.synced }
func (f *fakeClock) set(t time.Time, synced bool) {
	f.mu.Lock()
	f.now, f.synced = t, synced
	f.mu.Unlock()
}

// fakeTimer fires when the test says so. deadline is the fake clock's
// time plus the duration Run asked for.
type fakeTimer struct {
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop() bool          { return true }

// harness runs a Cron on a fake clock and hands the test every timer Run
// sets, so the test knows Run has finished a pass and is waiting.
type harness struct {
	t       *testing.T
	clk     *fakeClock
	c       *Cron
	log     *bytes.Buffer
	logMu   *sync.Mutex
	timers  chan *fakeTimer
	ctx     context.Context
	cancel  context.CancelFunc
	started bool
	done    chan error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func newHarness(t *testing.T, start time.Time, synced bool) *harness {
	h := &harness{t: t, clk: &fakeClock{now: start, synced: synced}, log: new(bytes.Buffer), logMu: new(sync.Mutex),
		timers: make(chan *fakeTimer), done: make(chan error, 1)}
	h.c = New(h.clk, slog.New(slog.NewTextHandler(lockedWriter{h.logMu, h.log}, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	h.ctx, h.cancel = ctx, cancel
	h.c.newTimer = func(d time.Duration) timer {
		ft := &fakeTimer{deadline: h.clk.Now().Add(d), c: make(chan time.Time, 1)}
		select {
		case h.timers <- ft:
		case <-ctx.Done():
		}
		return ft
	}
	t.Cleanup(h.stop)
	return h
}

func (h *harness) run() {
	h.started = true
	go func() { h.done <- h.c.Run(h.ctx) }()
}

func (h *harness) stop() {
	h.cancel()
	if h.started {
		h.started = false
		select {
		case err := <-h.done:
			if err != nil {
				h.t.Errorf("Run: %v", err)
			}
		case <-time.After(waitLong):
			h.t.Errorf("Run did not return")
		}
	}
}

func (h *harness) nextTimer() *fakeTimer {
	h.t.Helper()
	select {
	case ft := <-h.timers:
		return ft
	case <-time.After(waitLong):
		h.t.Fatal("Run set no timer")
		return nil
	}
}

// fire waits for every started run to end (so none is skipped as
// overlapping), moves the clock to the timer's deadline and fires it; it
// returns the timer Run sets next.
func (h *harness) fire(ft *fakeTimer) *fakeTimer {
	h.t.Helper()
	deadline := time.Now().Add(waitLong)
	for h.busy() {
		if time.Now().After(deadline) {
			h.t.Fatal("a job run did not end")
		}
		time.Sleep(time.Millisecond)
	}
	return h.fireBusy(ft)
}

// fireBusy fires the timer even while a run is going.
func (h *harness) fireBusy(ft *fakeTimer) *fakeTimer {
	h.t.Helper()
	h.clk.set(ft.deadline, h.clk.Synced())
	ft.c <- ft.deadline
	return h.nextTimer()
}

func (h *harness) busy() bool {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	for _, e := range h.c.jobs {
		if e.running {
			return true
		}
	}
	return false
}

func (h *harness) job(name string) Job {
	for _, j := range h.c.Jobs() {
		if j.Name == name {
			return j
		}
	}
	h.t.Fatalf("no job %q", name)
	return Job{}
}

// waitFor waits until the job's counters satisfy cond (a run's end is
// recorded after the job function returns).
func (h *harness) waitFor(cond func(Job) bool, name string) {
	h.t.Helper()
	deadline := time.Now().Add(waitLong)
	for !cond(h.job(name)) {
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s: condition not reached: %+v", name, h.job(name))
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *harness) logText() string { h.logMu.Lock(); defer h.logMu.Unlock(); return h.log.String() }

// counter is a job that counts its runs and signals each on ran.
type counter struct {
	mu  sync.Mutex
	at  []time.Time
	ran chan struct{}
	clk Clock
}

func newCounter(clk Clock) *counter { return &counter{ran: make(chan struct{}, 100), clk: clk} }

func (c *counter) job(ctx context.Context) error {
	c.mu.Lock()
	c.at = append(c.at, c.clk.Now())
	c.mu.Unlock()
	c.ran <- struct{}{}
	return nil
}

func (c *counter) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-c.ran:
		case <-time.After(waitLong):
			t.Fatal("job did not run")
		}
	}
}

func (c *counter) times() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.at...)
}

func date(y int, mo time.Month, d, h, mi, s int) time.Time {
	return time.Date(y, mo, d, h, mi, s, 0, time.Local)
}

func TestAddSpecErrors(t *testing.T) {
	c := New(&fakeClock{now: date(2026, 1, 1, 0, 0, 0)}, nil)
	nop := func(context.Context) error { return nil }
	for _, spec := range []string{"", "* * * *", "* * * * * *", "61 * * * *", "* 24 * * *", "* * 0 * *",
		"* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *", "@bogus", "@every x", "TZ=UTC * * * * *",
		"CRON_TZ=", "TZ=", "a b c d e"} {
		err := c.Add("backup", spec, nop)
		if err == nil {
			t.Errorf("Add(%q) accepted", spec)
			continue
		}
		if !strings.Contains(err.Error(), `"backup"`) || !strings.Contains(err.Error(), `"`+spec+`"`) {
			t.Errorf("Add(%q) error %q does not name the job and spec", spec, err)
		}
	}
	for i, spec := range []string{"*/5 * * * *", "0 3 * * 1-5", "@daily", "@every 90s", "15 4 1 jan *", "0 0 * * sun"} {
		if err := c.Add(string(rune('a'+i)), spec, nop); err != nil {
			t.Errorf("Add(%q): %v", spec, err)
		}
	}
	if err := c.Add("a", "* * * * *", nop); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate name: %v", err)
	}
	if err := c.Add("", "* * * * *", nop); err == nil {
		t.Error("empty name accepted")
	}
	if err := c.Add("n", "* * * * *", nil); err == nil {
		t.Error("nil job accepted")
	}
}

func TestJobsRunAtTheirTimes(t *testing.T) {
	h := newHarness(t, date(2026, 3, 1, 10, 0, 30), true)
	every := newCounter(h.clk)
	five := newCounter(h.clk)
	if err := h.c.Add("every", "* * * * *", every.job); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Add("five", "*/5 * * * *", five.job); err != nil {
		t.Fatal(err)
	}
	h.run()
	ft := h.nextTimer()
	if want := date(2026, 3, 1, 10, 1, 0); !ft.deadline.Equal(want) {
		t.Fatalf("first timer for %v, want %v", ft.deadline, want)
	}
	for range 5 {
		ft = h.fire(ft)
	}
	every.wait(t, 5)
	five.wait(t, 1)
	for i, at := range every.times() {
		if want := date(2026, 3, 1, 10, 1+i, 0); !at.Equal(want) {
			t.Errorf("every run %d at %v, want %v", i, at, want)
		}
	}
	if at := five.times(); len(at) != 1 || !at[0].Equal(date(2026, 3, 1, 10, 5, 0)) {
		t.Errorf("five ran at %v, want once at 10:05", at)
	}
	j := h.job("every")
	if j.Runs != 5 || j.Skipped != 0 || !j.Last.Equal(date(2026, 3, 1, 10, 5, 0)) || !j.Next.Equal(date(2026, 3, 1, 10, 6, 0)) {
		t.Errorf("every: %+v", j)
	}
	if j := h.job("five"); j.Runs != 1 || !j.Next.Equal(date(2026, 3, 1, 10, 10, 0)) || j.Spec != "*/5 * * * *" {
		t.Errorf("five: %+v", j)
	}
	if !ft.deadline.Equal(date(2026, 3, 1, 10, 6, 0)) {
		t.Errorf("timer after 10:05 for %v", ft.deadline)
	}
}

func TestUnsyncedClockSkips(t *testing.T) {
	h := newHarness(t, time.Unix(30, 0), false)
	job := newCounter(h.clk)
	if err := h.c.Add("j", "* * * * *", job.job); err != nil {
		t.Fatal(err)
	}
	h.run()
	ft := h.nextTimer()
	ft = h.fire(ft)
	ft = h.fire(ft)
	j := h.job("j")
	if j.Runs != 0 || j.Skipped != 2 {
		t.Errorf("unsynced: %+v, want 0 runs, 2 skipped", j)
	}
	// Synced from now on: the next time runs.
	h.clk.set(h.clk.Now(), true)
	h.fire(ft)
	job.wait(t, 1)
	if j := h.job("j"); j.Runs != 1 || j.Skipped != 2 {
		t.Errorf("after sync: %+v", j)
	}
}

// addMany adds jobs with assorted schedules that all had many due times
// between 1970 and 2026.
func addMany(t *testing.T, h *harness) map[string]*counter {
	jobs := map[string]*counter{}
	for name, spec := range map[string]string{
		"minute": "* * * * *", "hourly": "0 * * * *", "daily": "@daily", "monday": "0 3 * * 1",
		"every10s": "@every 10s", "yearly": "@yearly",
	} {
		jobs[name] = newCounter(h.clk)
		if err := h.c.Add(name, spec, jobs[name].job); err != nil {
			t.Fatal(err)
		}
	}
	return jobs
}

// After SNTP steps the clock from 1970 to 2026, nothing fires at once;
// the jobs run at their next times from the new time.
func TestClockStepNoBurst(t *testing.T) {
	for _, announced := range []bool{true, false} {
		name := "ClockChanged"
		if !announced {
			name = "unannounced"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, time.Unix(5, 0), false)
			jobs := addMany(t, h)
			h.run()
			ft := h.nextTimer()
			stepped := date(2026, 6, 3, 12, 0, 25) // a Wednesday
			h.clk.set(stepped, true)
			if announced {
				h.c.ClockChanged()
				ft = h.nextTimer()
			} else {
				// The timer set in 1970 fires; the clock now reads 2026.
				ft.c <- ft.deadline
				ft = h.nextTimer()
			}
			for name, j := range h.c.Jobs() {
				if j.Runs != 0 {
					t.Errorf("job %v ran right after the step: %+v", name, j)
				}
			}
			// @every counts from the new time (12:00:35, :45, :55); the
			// minute job runs at 12:01; nothing else by then.
			if want := date(2026, 6, 3, 12, 0, 35); !ft.deadline.Equal(want) {
				t.Errorf("timer for %v, want %v (every10s)", ft.deadline, want)
			}
			for !ft.deadline.After(date(2026, 6, 3, 12, 1, 0)) {
				ft = h.fire(ft)
			}
			jobs["every10s"].wait(t, 3)
			jobs["minute"].wait(t, 1)
			for _, j := range h.c.Jobs() {
				want := uint64(0)
				switch j.Name {
				case "every10s":
					want = 3
				case "minute":
					want = 1
				}
				if j.Runs != want {
					t.Errorf("%s ran %d times by 12:01, want %d", j.Name, j.Runs, want)
				}
				if j.Name == "hourly" && !j.Next.Equal(date(2026, 6, 3, 13, 0, 0)) {
					t.Errorf("hourly next %v", j.Next)
				}
			}
		})
	}
}

func TestJobPanicRecovered(t *testing.T) {
	h := newHarness(t, date(2026, 3, 1, 10, 0, 0), true)
	calls := make(chan struct{}, 10)
	if err := h.c.Add("bad", "* * * * *", func(context.Context) error {
		calls <- struct{}{}
		panic("boom\nsecond line")
	}); err != nil {
		t.Fatal(err)
	}
	h.run()
	ft := h.fire(h.nextTimer())
	<-calls
	h.waitFor(func(j Job) bool { return j.Failures == 1 }, "bad")
	h.fire(ft)
	<-calls
	h.waitFor(func(j Job) bool { return j.Failures == 2 }, "bad")
	j := h.job("bad")
	if j.Runs != 2 || j.Failures != 2 || j.LastErr != "panic: boom" {
		t.Errorf("after panics: %+v", j)
	}
	log := h.logText()
	if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "job=bad") || !strings.Contains(log, "stack=") ||
		!strings.Contains(log, "TestJobPanicRecovered") {
		t.Errorf("panic log lacks level, job or stack:\n%s", log)
	}
}

func TestJobErrorCounted(t *testing.T) {
	h := newHarness(t, date(2026, 3, 1, 10, 0, 0), true)
	done := make(chan struct{})
	if err := h.c.Add("e", "* * * * *", func(context.Context) error { defer close(done); return errors.New("disk full") }); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.fire(h.nextTimer())
	<-done
	h.waitFor(func(j Job) bool { return j.Failures == 1 }, "e")
	if j := h.job("e"); j.Failures != 1 || j.LastErr != "disk full" {
		t.Errorf("%+v", j)
	}
}

func TestOverlappingRunSkipped(t *testing.T) {
	h := newHarness(t, date(2026, 3, 1, 10, 0, 0), true)
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	if err := h.c.Add("slow", "* * * * *", func(ctx context.Context) error {
		started <- struct{}{}
		<-release
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.run()
	ft := h.fire(h.nextTimer())
	<-started
	h.fireBusy(ft)
	if j := h.job("slow"); j.Runs != 1 || j.Skipped != 1 {
		t.Errorf("overlap: %+v", j)
	}
	close(release)
}

func TestRemove(t *testing.T) {
	h := newHarness(t, date(2026, 3, 1, 10, 0, 0), true)
	a, b := newCounter(h.clk), newCounter(h.clk)
	if err := h.c.Add("a", "* * * * *", a.job); err != nil {
		t.Fatal(err)
	}
	if err := h.c.Add("b", "*/2 * * * *", b.job); err != nil {
		t.Fatal(err)
	}
	h.run()
	ft := h.nextTimer()
	if !h.c.Remove("a") {
		t.Fatal("Remove(a) = false")
	}
	if h.c.Remove("a") || h.c.Remove("nope") {
		t.Error("Remove of a missing job = true")
	}
	ft = h.nextTimer() // Run recomputed without a
	if want := date(2026, 3, 1, 10, 2, 0); !ft.deadline.Equal(want) {
		t.Errorf("timer for %v after Remove, want %v", ft.deadline, want)
	}
	h.fire(ft)
	b.wait(t, 1)
	if len(a.times()) != 0 {
		t.Error("removed job ran")
	}
	if js := h.c.Jobs(); len(js) != 1 || js[0].Name != "b" {
		t.Errorf("Jobs = %+v", js)
	}
	// Re-adding the name works.
	if err := h.c.Add("a", "@hourly", a.job); err != nil {
		t.Error(err)
	}
}

func TestRunTwice(t *testing.T) {
	h := newHarness(t, date(2026, 3, 1, 10, 0, 0), true)
	if err := h.c.Add("a", "* * * * *", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	h.run()
	h.nextTimer()
	if err := h.c.Run(context.Background()); err == nil {
		t.Error("second Run accepted")
	}
}

// With the real timer and system clock: a job scheduled every second runs.
func TestRealTimer(t *testing.T) {
	clk := clock.NewSystem()
	if err := clk.Step(time.Now()); err != nil {
		t.Fatal(err)
	}
	c := New(clk, nil)
	ran := make(chan struct{}, 10)
	if err := c.Add("tick", "@every 1s", func(context.Context) error { ran <- struct{}{}; return nil }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	for range 2 {
		select {
		case <-ran:
		case <-time.After(waitLong):
			t.Fatal("job did not run")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func FuzzAdd(f *testing.F) {
	for _, s := range []string{"* * * * *", "*/5 1-3 * jan-mar mon,wed", "@daily", "@every 1h30m", "TZ=UTC * * * * *",
		"CRON_TZ=", "0-59/7 0 29 2 *", "? ? ? ? ?", "1,2,3-9/2 * L * *", "@every -1s", "-1 * * * *", "99999999999999999999 * * * *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		c := New(&fakeClock{now: date(2026, 1, 1, 0, 0, 0), synced: true}, nil)
		if err := c.Add("f", spec, func(context.Context) error { return nil }); err != nil {
			return
		}
		if js := c.Jobs(); len(js) != 1 {
			t.Fatalf("Jobs = %+v", js)
		}
	})
}
