// Package cron runs Go functions on standard five-field schedules
// ("*/5 * * * *", "@daily") inside the supervisor: no resident daemon, no
// polling loop, one timer set for the earliest next run.
//
// Schedules are parsed by github.com/robfig/cron/v3's standard parser;
// this package only keeps the jobs and decides when to run them. Times are
// evaluated in time.Local (the firmware's configured time zone).
//
// A router often boots with its clock in 1970 and learns the time from
// SNTP later. Cron therefore
//   - runs nothing while the clock is not synced (the run is counted as
//     skipped), and
//   - never catches up: when the clock was stepped (ClockChanged, or a run
//     found more than lateTolerance overdue), every job's next run is
//     computed from the new time, so setting the clock from 1970 to 2026
//     fires at most the jobs whose time comes next, not every run missed in
//     between.
//
// A job runs in its own goroutine with Run's context; a job still running
// when its next time comes is not started twice (skipped). A panicking job
// is recovered, logged with its stack and counted as a failure.
package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// Clock is the wall clock jobs are scheduled by. *clock.System (sys/clock)
// satisfies it.
type Clock interface {
	Now() time.Time
	Synced() bool // false until the time was set (SNTP, or a saved time judged good)
}

// lateTolerance is how far past its time a run may start and still run.
// A timer that fires a little late (a busy CPU, slewing) runs the job; a
// run found later than this was missed while the clock jumped forward or
// the device was suspended, and is skipped rather than run out of time.
const lateTolerance = time.Minute

// maxSleep bounds the timer. The timer counts monotonic time; if the wall
// clock is stepped back without ClockChanged, a sleep computed before the
// step would be too long. Waking at least hourly bounds that error at no
// measurable cost (this is one wakeup an hour, not a poll).
const maxSleep = time.Hour

// timer is the one timer Run waits on; injectable so tests drive time.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

func newRealTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

// Job is one job's schedule and counters, as Jobs reports them.
type Job struct {
	Name, Spec string
	Next, Last time.Time // Next zero: the schedule has no next time; Last zero: never ran
	Runs       uint64    // runs started
	Skipped    uint64    // due times not run: clock unsynced, missed while stepped, previous run still going
	Failures   uint64    // runs that returned an error or panicked
	LastErr    string
}

type entry struct {
	Job
	sched   robfig.Schedule
	run     func(ctx context.Context) error
	running bool
}

// Cron is a set of scheduled jobs. Add and Remove may be called before or
// while Run runs.
type Cron struct {
	clk      Clock
	log      *slog.Logger
	newTimer func(time.Duration) timer

	wake chan struct{} // Add, Remove, ClockChanged: recompute the timer

	mu      sync.Mutex
	jobs    map[string]*entry
	stepped bool // ClockChanged since Run last looked
	running bool // Run is active
	wg      sync.WaitGroup
	runCtx  context.Context
}

// New returns an empty Cron scheduling by clk. log may be nil.
func New(clk Clock, log *slog.Logger) *Cron {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cron{
		clk:      clk,
		log:      log,
		newTimer: newRealTimer,
		wake:     make(chan struct{}, 1),
		jobs:     make(map[string]*entry),
	}
}

// ErrDuplicate is returned by Add for a name already in use.
var ErrDuplicate = errors.New("cron: duplicate job name")

// parse parses a standard five-field spec or a descriptor. It refuses a
// TZ= prefix (the zone is the system's; loading one needs a zoneinfo file
// system the firmware does not have) and turns any panic of the parser
// into an error, since specs come from configuration text.
func parse(spec string) (s robfig.Schedule, err error) {
	t := strings.TrimSpace(spec)
	if strings.HasPrefix(t, "TZ=") || strings.HasPrefix(t, "CRON_TZ=") {
		return nil, errors.New("time zone prefix not supported (the system time zone applies)")
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("unparsable: %v", r)
		}
	}()
	return robfig.ParseStandard(t)
}

// Add schedules job under name by spec: five fields (minute hour
// day-of-month month day-of-week) or a descriptor (@hourly, @daily,
// @every 10m ...). A bad spec is an error naming the job and the spec.
func (c *Cron) Add(name, spec string, job func(ctx context.Context) error) error {
	if name == "" {
		return errors.New("cron: empty job name")
	}
	if job == nil {
		return fmt.Errorf("cron: job %q: nil function", name)
	}
	sched, err := parse(spec)
	if err != nil {
		return fmt.Errorf("cron: job %q: bad schedule %q: %v", name, spec, err)
	}
	c.mu.Lock()
	if _, ok := c.jobs[name]; ok {
		c.mu.Unlock()
		return fmt.Errorf("%w %q", ErrDuplicate, name)
	}
	e := &entry{Job: Job{Name: name, Spec: spec}, sched: sched, run: job}
	e.Next = sched.Next(c.clk.Now())
	c.jobs[name] = e
	c.mu.Unlock()
	c.poke()
	return nil
}

// Remove unschedules name; a run in progress finishes. It reports whether
// the job existed.
func (c *Cron) Remove(name string) bool {
	c.mu.Lock()
	_, ok := c.jobs[name]
	delete(c.jobs, name)
	c.mu.Unlock()
	if ok {
		c.poke()
	}
	return ok
}

// ClockChanged tells Cron the wall clock was stepped (SNTP set it): every
// job's next run is computed afresh from the new time. Runs missed in
// between are not made up.
func (c *Cron) ClockChanged() {
	c.mu.Lock()
	c.stepped = true
	c.mu.Unlock()
	c.poke()
}

func (c *Cron) poke() {
	select {
	case c.wake <- struct{}{}:
	default: // a wakeup is already pending
	}
}

// Jobs returns every job's schedule and counters, by name.
func (c *Cron) Jobs() []Job {
	c.mu.Lock()
	out := make([]Job, 0, len(c.jobs))
	for _, e := range c.jobs {
		out = append(out, e.Job)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Job) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Run runs the jobs at their times until ctx is done, then waits for the
// jobs it started (they get ctx too) and returns nil. It is meant to be a
// supervised service; only one Run may be active at a time.
func (c *Cron) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return errors.New("cron: already running")
	}
	c.running = true
	c.runCtx = ctx
	c.stepped = true // compute every next run from the time Run starts
	c.mu.Unlock()
	select {
	case <-c.wake: // from Add or ClockChanged before Run: the first pass covers them
	default:
	}
	defer func() {
		c.wg.Wait()
		c.mu.Lock()
		c.running = false
		c.runCtx = nil
		c.mu.Unlock()
	}()

	for {
		wait, ok := c.check()
		var t timer
		var tc <-chan time.Time
		if ok {
			t = c.newTimer(min(wait, maxSleep))
			tc = t.C()
		}
		select {
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			return nil
		case <-c.wake:
			if t != nil {
				t.Stop()
			}
		case <-tc:
		}
	}
}

// check starts the jobs that are due and returns how long until the
// earliest next run (ok false: no job has one).
func (c *Cron) check() (wait time.Duration, ok bool) {
	now := c.clk.Now()
	synced := c.clk.Synced()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stepped {
		c.stepped = false
		for _, e := range c.jobs {
			e.Next = e.sched.Next(now)
		}
	}
	var earliest time.Time
	for _, e := range c.jobs {
		if e.Next.IsZero() {
			continue // no time in the schedule's range (e.g. 30 February)
		}
		if now.Before(e.Next) {
			if earliest.IsZero() || e.Next.Before(earliest) {
				earliest = e.Next
			}
			continue
		}
		switch {
		case !synced:
			e.Skipped++
		case now.Sub(e.Next) > lateTolerance:
			e.Skipped++
			c.log.Warn("cron: run missed, clock jumped", "job", e.Name, "due", e.Next, "now", now)
		case e.running:
			e.Skipped++
			c.log.Warn("cron: previous run still going, skipped", "job", e.Name)
		default:
			e.Runs++
			e.Last = now
			e.running = true
			c.wg.Add(1)
			go c.runJob(c.runCtx, e)
		}
		e.Next = e.sched.Next(now)
		if !e.Next.IsZero() && (earliest.IsZero() || e.Next.Before(earliest)) {
			earliest = e.Next
		}
	}
	if earliest.IsZero() {
		return 0, false
	}
	return earliest.Sub(now), true
}

// runJob runs one job, recovering a panic (logged with its stack).
func (c *Cron) runJob(ctx context.Context, e *entry) {
	defer c.wg.Done()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %s", firstLine(fmt.Sprint(r)))
				c.log.Error("cron: job panicked", "job", e.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		err = e.run(ctx)
	}()
	c.mu.Lock()
	e.running = false
	if err != nil {
		e.Failures++
		e.LastErr = err.Error()
	}
	c.mu.Unlock()
	if err != nil {
		c.log.Warn("cron: job failed", "job", e.Name, "err", err)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
