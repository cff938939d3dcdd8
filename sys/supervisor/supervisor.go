// Package supervisor runs the firmware's services: goroutines registered
// with a restart policy, started in dependency order, restarted with
// exponential backoff after a failure, parked when they crash in a loop,
// and stopped in reverse order within a deadline.
//
// A panic in a service (or in a listener's connection handler) is
// recovered, logged at Error level with its stack (attributes "service"
// and "stack"), counted, and handled as a failure: the firmware never goes
// down because one service did.
//
// Every state change is published on the event bus (bus.Service), and
// Status and Command (the shell's `services`) report state, restarts,
// uptime and the last error per service.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

// Restart is a service's restart policy.
type Restart int

const (
	Always    Restart = iota // restart whenever Run returns (nil or error)
	OnFailure                // restart when Run fails (error or panic); a nil return ends the service ("done")
	Never                    // never restart: "done" after nil, "failed" after a failure
)

func (r Restart) String() string {
	switch r {
	case Always:
		return "always"
	case OnFailure:
		return "on-failure"
	case Never:
		return "never"
	}
	return fmt.Sprintf("Restart(%d)", int(r))
}

// Defaults of Service's zero fields. Backoff 1 s doubling to 1 min, and
// a crash loop of 5 failures in a minute, are in line with what systemd
// (StartLimitBurst=5 in 10 s) and procd (respawn threshold 3600 s, 5 s
// delay, 5 retries) do for a daemon that keeps dying.
const (
	DefaultMinBackoff  = time.Second
	DefaultMaxBackoff  = time.Minute
	DefaultCrashLoop   = 5
	DefaultCrashWindow = time.Minute
	DefaultStopTimeout = 5 * time.Second
)

// Service states as Status and the bus report them.
const (
	StateStarting  = "starting"  // its goroutine is starting
	StateWaiting   = "waiting"   // a service it needs is not running (backoff, parked, failed, stopped)
	StateRunning   = "running"   // Run is running
	StateListening = "listening" // a listener service accepting connections
	StateBackoff   = "backoff"   // failed, waiting to be restarted
	StateParked    = "parked"    // crash loop: not restarted until StartService
	StateStopping  = "stopping"  // asked to stop; Run has not returned yet
	StateStopped   = "stopped"   // stopped by Stop or StopService (or never started)
	StateDone      = "done"      // returned nil and its policy does not restart it
	StateFailed    = "failed"    // failed and its policy (Never) does not restart it
)

// Service is one supervised service.
type Service struct {
	Name    string
	Needs   []string                        // started only after these are running; stopped before them
	Restart Restart                         // what to do when Run returns
	Run     func(ctx context.Context) error // returns when ctx is done (nil) or on failure (error); a panic is a failure

	MinBackoff, MaxBackoff time.Duration // exponential restart delay; defaults 1 s and 1 min
	CrashLoop              int           // park after this many failures ...
	CrashWindow            time.Duration // ... within this window (defaults 5 in 1 min)
	StopTimeout            time.Duration // how long Stop waits for Run to return; default 5 s
}

// Status is one service's state as Status reports it.
type Status struct {
	Name     string
	State    string    // "starting","running","backoff","parked","stopped","done","listening" (also "waiting","stopping","failed")
	Restarts int       // automatic restarts since it was added
	LastErr  string    // error text or "panic: ..." first line
	Since    time.Time // when State was entered (uptime of a running service)

	Conns, Rejected, Panics uint64 // listeners: connections served, refused over maxConns, handler panics (Panics also counts Run panics)
}

// timer is what backoff waits on; injectable so tests see the delays.
type timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

func newRealTimer(d time.Duration) timer { return realTimer{time.NewTimer(d)} }

// unit is a service under supervision.
type unit struct {
	svc      Service
	listener *listener // nil for a plain service

	// Under Supervisor.mu:
	state     string
	since     time.Time
	restarts  int
	lastErr   string
	panics    uint64
	failures  []time.Time   // failure times within the crash window
	cancel    func()        // stops the current manager goroutine
	done      chan struct{} // closed when the manager goroutine returns; nil if none ran
	cancelled bool          // cancel was called for the current manager
}

// alive reports whether the unit's manager goroutine is running.
func (u *unit) alive() bool {
	if u.done == nil {
		return false
	}
	select {
	case <-u.done:
		return false
	default:
		return true
	}
}

// Supervisor runs services. Its methods are safe for concurrent use.
type Supervisor struct {
	log *slog.Logger
	bus *event.Bus

	now      func() time.Time
	newTimer func(time.Duration) timer

	mu       sync.Mutex
	units    []*unit // in Add order, which is a dependency order (needs are added first)
	byName   map[string]*unit
	ctx      context.Context // from Start; nil before
	stopped  bool            // Stop was called
	changed  chan struct{}   // closed and replaced at every state change
	lastStop []string
}

// New returns a supervisor logging to log (nil: discard) and publishing
// state changes on bus.Service (bus may be nil).
func New(log *slog.Logger, bus *event.Bus) *Supervisor {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{
		log:      log,
		bus:      bus,
		now:      time.Now,
		newTimer: newRealTimer,
		byName:   make(map[string]*unit),
		changed:  make(chan struct{}),
	}
}

func withDefaults(svc Service) Service {
	if svc.MinBackoff <= 0 {
		svc.MinBackoff = DefaultMinBackoff
	}
	if svc.MaxBackoff <= 0 {
		svc.MaxBackoff = DefaultMaxBackoff
	}
	svc.MaxBackoff = max(svc.MaxBackoff, svc.MinBackoff)
	if svc.CrashLoop <= 0 {
		svc.CrashLoop = DefaultCrashLoop
	}
	if svc.CrashWindow <= 0 {
		svc.CrashWindow = DefaultCrashWindow
	}
	if svc.StopTimeout <= 0 {
		svc.StopTimeout = DefaultStopTimeout
	}
	svc.Needs = append([]string(nil), svc.Needs...)
	return svc
}

// Add registers a service, before or after Start (after Start it starts
// at once). Its needs must already be registered, so services are added
// in dependency order and a cycle cannot form; a duplicate name, an
// unknown need or a service needing itself is an error.
func (s *Supervisor) Add(svc Service) error {
	if svc.Run == nil {
		return fmt.Errorf("supervisor: service %q: nil Run", svc.Name)
	}
	return s.add(&unit{svc: withDefaults(svc)})
}

func (s *Supervisor) add(u *unit) error {
	name := u.svc.Name
	if name == "" || strings.ContainsAny(name, " \t\n") {
		return fmt.Errorf("supervisor: bad service name %q", name)
	}
	if u.svc.Restart < Always || u.svc.Restart > Never {
		return fmt.Errorf("supervisor: service %q: bad restart policy %d", name, int(u.svc.Restart))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.byName[name]; dup {
		return fmt.Errorf("supervisor: duplicate service %q", name)
	}
	for _, n := range u.svc.Needs {
		if n == name {
			return fmt.Errorf("supervisor: service %q: dependency cycle: it needs itself", name)
		}
		if _, ok := s.byName[n]; !ok {
			return fmt.Errorf("supervisor: service %q needs unknown service %q (add needs first)", name, n)
		}
	}
	if s.stopped {
		return errors.New("supervisor: stopped")
	}
	u.state, u.since = StateStopped, s.now()
	s.units = append(s.units, u)
	s.byName[name] = u
	if s.ctx != nil {
		s.launchLocked(u)
	}
	return nil
}

// Start starts every service in dependency order: each one's Run is
// called only once the services it needs are running. ctx bounds the
// services' lives (Stop is the orderly way to end them).
func (s *Supervisor) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return errors.New("supervisor: stopped")
	case s.ctx != nil:
		return errors.New("supervisor: already started")
	}
	s.ctx = ctx
	for _, u := range s.units {
		s.launchLocked(u)
	}
	return nil
}

// launchLocked starts u's manager goroutine.
func (s *Supervisor) launchLocked(u *unit) {
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	u.cancel, u.done, u.cancelled = cancel, done, false
	s.setStateLocked(u, StateStarting)
	go s.manage(ctx, u, done)
}

// setStateLocked records and publishes a state change.
func (s *Supervisor) setStateLocked(u *unit, state string) {
	if u.state == state {
		return
	}
	u.state, u.since = state, s.now()
	close(s.changed)
	s.changed = make(chan struct{})
	if s.bus != nil {
		s.bus.Service.Publish(event.ServiceState{Service: u.svc.Name, State: state, Restarts: u.restarts, Err: u.lastErr})
	}
}

func (s *Supervisor) setState(u *unit, state string) {
	s.mu.Lock()
	s.setStateLocked(u, state)
	s.mu.Unlock()
}

// needsMetLocked reports whether every service u needs is running
// (or finished its work: "done").
func (s *Supervisor) needsMetLocked(u *unit) bool {
	for _, n := range u.svc.Needs {
		switch s.byName[n].state {
		case StateRunning, StateListening, StateDone:
		default:
			return false
		}
	}
	return true
}

// waitNeeds waits until u's needs are met, then marks u running (under
// the same lock, so a dependent never sees it running before its needs
// are). It returns false if ctx ended first.
func (s *Supervisor) waitNeeds(ctx context.Context, u *unit) bool {
	for {
		s.mu.Lock()
		if ctx.Err() != nil {
			s.mu.Unlock()
			return false
		}
		if s.needsMetLocked(u) {
			if u.listener != nil {
				s.setStateLocked(u, StateListening)
			} else {
				s.setStateLocked(u, StateRunning)
			}
			s.mu.Unlock()
			return true
		}
		s.setStateLocked(u, StateWaiting)
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// manage is a unit's goroutine: run, and restart by policy with backoff,
// until stopped, parked or finished.
func (s *Supervisor) manage(ctx context.Context, u *unit, done chan struct{}) {
	defer close(done)
	svc := u.svc
	delay := svc.MinBackoff
	for {
		if !s.waitNeeds(ctx, u) {
			s.finish(u, StateStopped)
			return
		}
		started := s.now()
		err, panicked := s.call(ctx, u)
		if ctx.Err() != nil {
			s.mu.Lock()
			if err != nil && !errors.Is(err, context.Canceled) {
				u.lastErr = errText(err)
			}
			s.mu.Unlock()
			s.finish(u, StateStopped)
			return
		}
		now := s.now()
		failed := err != nil
		if failed && !panicked {
			s.log.Warn("service failed", "service", svc.Name, "err", err)
		}
		// A run longer than the crash window was healthy: what came
		// before it no longer counts.
		if now.Sub(started) >= svc.CrashWindow {
			delay = svc.MinBackoff
		}

		s.mu.Lock()
		if failed {
			u.lastErr = errText(err)
			cut := now.Add(-svc.CrashWindow)
			kept := u.failures[:0]
			for _, t := range u.failures {
				if t.After(cut) {
					kept = append(kept, t)
				}
			}
			u.failures = append(kept, now)
		}
		lastErr := u.lastErr
		switch {
		case !failed && svc.Restart != Always:
			s.setStateLocked(u, StateDone)
			s.mu.Unlock()
			return
		// The log line goes out before the state changes, so whoever sees
		// the state (services, a test) finds the reason in the log.
		case failed && svc.Restart == Never:
			s.log.Error("service failed, not restarted (policy never)", "service", svc.Name, "err", lastErr)
			s.setStateLocked(u, StateFailed)
			s.mu.Unlock()
			return
		case failed && len(u.failures) >= svc.CrashLoop:
			s.log.Error("service parked: crash loop", "service", svc.Name, "failures", len(u.failures),
				"window", svc.CrashWindow.String(), "err", lastErr)
			s.setStateLocked(u, StateParked)
			s.mu.Unlock()
			return
		}
		s.setStateLocked(u, StateBackoff)
		s.mu.Unlock()

		t := s.newTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			s.finish(u, StateStopped)
			return
		case <-t.C():
		}
		delay = min(2*delay, svc.MaxBackoff)
		s.mu.Lock()
		u.restarts++
		s.setStateLocked(u, StateStarting)
		s.mu.Unlock()
	}
}

// finish records the state a manager ends in.
func (s *Supervisor) finish(u *unit, state string) {
	s.mu.Lock()
	s.setStateLocked(u, state)
	s.mu.Unlock()
}

// call runs the service once, turning a panic into an error.
func (s *Supervisor) call(ctx context.Context, u *unit) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err, panicked = panicError(r), true
			s.mu.Lock()
			u.panics++
			s.mu.Unlock()
			s.log.Error("service panicked", "service", u.svc.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	return u.svc.Run(ctx), false
}

func panicError(r any) error {
	return errors.New("panic: " + firstLine(fmt.Sprint(r)))
}

func errText(err error) string { return firstLine(err.Error()) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// lookup returns the unit named name.
func (s *Supervisor) lookup(name string) (*unit, error) {
	u, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("supervisor: unknown service %q", name)
	}
	return u, nil
}

// StartService starts a stopped, finished, failed or parked service (a
// parked one gets a fresh crash-loop count and backoff). Starting a
// running service does nothing.
func (s *Supervisor) StartService(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, err := s.lookup(name)
	switch {
	case err != nil:
		return err
	case s.stopped:
		return errors.New("supervisor: stopped")
	case s.ctx == nil:
		return errors.New("supervisor: not started")
	case u.alive() && u.cancelled:
		return fmt.Errorf("supervisor: service %q is still stopping", name)
	case u.alive():
		return nil
	}
	if u.state == StateParked {
		s.log.Info("service un-parked", "service", name)
	}
	u.failures = nil
	s.launchLocked(u)
	return nil
}

// StopService stops one service and waits up to its StopTimeout for it
// to return. Services that need it keep running.
func (s *Supervisor) StopService(name string) error {
	s.mu.Lock()
	u, err := s.lookup(name)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if !u.alive() {
		s.setStateLocked(u, StateStopped)
		s.mu.Unlock()
		return nil
	}
	done := s.cancelLocked(u)
	s.mu.Unlock()
	if !waitDone(done, u.svc.StopTimeout) {
		return fmt.Errorf("supervisor: service %q did not stop within %v", name, u.svc.StopTimeout)
	}
	return nil
}

// cancelLocked asks u's manager to stop and returns its done channel.
func (s *Supervisor) cancelLocked(u *unit) chan struct{} {
	u.cancelled = true
	u.cancel()
	switch u.state {
	case StateRunning, StateListening:
		s.setStateLocked(u, StateStopping)
	}
	return u.done
}

func waitDone(done chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// RestartService stops the service (if running) and starts it again.
func (s *Supervisor) RestartService(name string) error {
	if err := s.StopService(name); err != nil {
		return err
	}
	return s.StartService(name)
}

// StopError names the services that did not return within the deadline.
type StopError struct {
	Services []string
}

func (e *StopError) Error() string {
	return "supervisor: did not stop in time: " + strings.Join(e.Services, ", ")
}

// Stop stops every service, dependents before what they need (reverse
// dependency order), waiting for each up to its StopTimeout and in all at
// most timeout (<= 0: no overall limit). A service that does not return
// in time is reported and Stop goes on with the next; once the overall
// deadline has passed, the rest are all cancelled at once and those that
// have not returned by then are reported too. Services that did not
// return are named in a *StopError; Stop itself returns within the
// deadline. After Stop the supervisor starts nothing more.
func (s *Supervisor) Stop(timeout time.Duration) error {
	s.mu.Lock()
	s.stopped = true
	units := append([]*unit(nil), s.units...)
	s.mu.Unlock()

	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	var stuck []string
	var late []*unit
	for i := len(units) - 1; i >= 0; i-- {
		u := units[i]
		s.mu.Lock()
		if !u.alive() {
			s.mu.Unlock()
			continue
		}
		done := s.cancelLocked(u)
		s.mu.Unlock()
		wait := u.svc.StopTimeout
		if !deadline.IsZero() {
			wait = min(wait, time.Until(deadline))
		}
		if wait <= 0 {
			late = append(late, u)
			continue
		}
		if !waitDone(done, wait) {
			stuck = append(stuck, u.svc.Name)
			s.mu.Lock()
			u.lastErr = "did not stop in time"
			s.mu.Unlock()
			s.log.Error("service did not stop in time", "service", u.svc.Name, "timeout", wait.String())
		}
	}
	// Past the deadline: these were cancelled without a wait of their
	// own; report whichever has not returned by now.
	for _, u := range late {
		if !u.alive() {
			continue
		}
		stuck = append(stuck, u.svc.Name)
		s.mu.Lock()
		u.lastErr = "did not stop in time"
		s.mu.Unlock()
		s.log.Error("service did not stop in time", "service", u.svc.Name, "timeout", "0s")
	}
	if len(stuck) > 0 {
		return &StopError{Services: stuck}
	}
	return nil
}

// Status returns every service's state, in dependency (Add) order.
func (s *Supervisor) Status() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Status, 0, len(s.units))
	for _, u := range s.units {
		st := Status{Name: u.svc.Name, State: u.state, Restarts: u.restarts, LastErr: u.lastErr, Since: u.since, Panics: u.panics}
		if l := u.listener; l != nil {
			st.Conns, st.Rejected = l.conns.Load(), l.rejected.Load()
			st.Panics += l.panics.Load()
		}
		out = append(out, st)
	}
	return out
}
