package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/sys/event"
)

// waitLong bounds every wait: generous, so a loaded machine or qemu-user
// cannot fail a test; they normally finish at once.
const waitLong = 30 * time.Second

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// instantTimer fires at once; the delays asked for are recorded.
type instantTimer struct{ c chan time.Time }

func (t instantTimer) C() <-chan time.Time { return t.c }
func (t instantTimer) Stop() bool          { return true }

type delays struct {
	mu sync.Mutex
	d  []time.Duration
}

func (d *delays) timer(dur time.Duration) timer {
	d.mu.Lock()
	d.d = append(d.d, dur)
	d.mu.Unlock()
	c := make(chan time.Time, 1)
	c <- time.Now()
	return instantTimer{c}
}

func (d *delays) get() []time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.d)
}

type testSup struct {
	*Supervisor
	log    *logBuf
	delays *delays
	bus    *event.Bus
}

func newSup(t *testing.T) *testSup {
	ts := &testSup{log: new(logBuf), delays: new(delays), bus: event.NewBus()}
	ts.Supervisor = New(slog.New(slog.NewTextHandler(ts.log, nil)), ts.bus)
	ts.newTimer = ts.delays.timer
	t.Cleanup(func() { ts.Stop(waitLong) })
	return ts
}

func (s *testSup) status(name string) Status {
	for _, st := range s.Status() {
		if st.Name == name {
			return st
		}
	}
	return Status{}
}

// waitState waits until the service is in state.
func (s *testSup) waitState(t *testing.T, name, state string) Status {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		st := s.status(name)
		if st.State == state {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %q, want %q: %+v", name, st.State, state, st)
		}
		time.Sleep(time.Millisecond)
	}
}

func block(ctx context.Context) error { <-ctx.Done(); return nil }

func TestRestartPolicies(t *testing.T) {
	s := newSup(t)
	var alwaysRuns, onFailRuns, onFailNil, neverErr, neverNil atomic.Int32
	add := func(svc Service) {
		t.Helper()
		svc.CrashLoop, svc.CrashWindow = 100, time.Hour
		if err := s.Add(svc); err != nil {
			t.Fatal(err)
		}
	}
	// Always: restarted after a nil return too; the third run stays.
	add(Service{Name: "always", Restart: Always, Run: func(ctx context.Context) error {
		if alwaysRuns.Add(1) < 3 {
			return nil
		}
		return block(ctx)
	}})
	// OnFailure: restarted after errors, done after nil.
	add(Service{Name: "onfailure", Restart: OnFailure, Run: func(ctx context.Context) error {
		if onFailRuns.Add(1) < 3 {
			return errors.New("transient")
		}
		return nil
	}})
	add(Service{Name: "onfailure-nil", Restart: OnFailure, Run: func(ctx context.Context) error { onFailNil.Add(1); return nil }})
	add(Service{Name: "never-err", Restart: Never, Run: func(ctx context.Context) error { neverErr.Add(1); return errors.New("bad config") }})
	add(Service{Name: "never-nil", Restart: Never, Run: func(ctx context.Context) error { neverNil.Add(1); return nil }})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for alwaysRuns.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	if st := s.waitState(t, "always", StateRunning); st.Restarts != 2 {
		t.Errorf("always: %+v after 3 runs, want 2 restarts", st)
	}
	if st := s.waitState(t, "onfailure", StateDone); st.Restarts != 2 || onFailRuns.Load() != 3 || st.LastErr != "transient" {
		t.Errorf("onfailure: %+v, runs %d", st, onFailRuns.Load())
	}
	if st := s.waitState(t, "onfailure-nil", StateDone); st.Restarts != 0 || onFailNil.Load() != 1 {
		t.Errorf("onfailure-nil: %+v", st)
	}
	if st := s.waitState(t, "never-err", StateFailed); st.Restarts != 0 || neverErr.Load() != 1 || st.LastErr != "bad config" {
		t.Errorf("never-err: %+v", st)
	}
	if st := s.waitState(t, "never-nil", StateDone); st.Restarts != 0 || neverNil.Load() != 1 {
		t.Errorf("never-nil: %+v", st)
	}
}

func TestBackoffGrowthAndCap(t *testing.T) {
	s := newSup(t)
	var runs atomic.Int32
	err := s.Add(Service{Name: "flaky", Restart: Always, MinBackoff: 10 * time.Millisecond, MaxBackoff: 70 * time.Millisecond,
		CrashLoop: 100, CrashWindow: time.Hour,
		Run: func(ctx context.Context) error {
			if runs.Add(1) <= 6 {
				return errors.New("no carrier")
			}
			return block(ctx)
		}})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	for runs.Load() < 7 {
		time.Sleep(time.Millisecond)
	}
	st := s.waitState(t, "flaky", StateRunning)
	ms := time.Millisecond
	want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 70 * ms, 70 * ms, 70 * ms}
	if got := s.delays.get(); !slices.Equal(got, want) {
		t.Errorf("backoff delays %v, want %v", got, want)
	}
	if st.Restarts != 6 || st.LastErr != "no carrier" {
		t.Errorf("status %+v", st)
	}
}

// A run longer than the crash window resets the backoff.
func TestBackoffResetsAfterHealthyRun(t *testing.T) {
	s := newSup(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var runs atomic.Int32
	err := s.Add(Service{Name: "svc", MinBackoff: time.Second, MaxBackoff: time.Hour, CrashLoop: 100, CrashWindow: time.Minute,
		Run: func(ctx context.Context) error {
			switch runs.Add(1) {
			case 1, 2, 4:
				return errors.New("fail")
			case 3: // a long, healthy run
				mu.Lock()
				now = now.Add(2 * time.Minute)
				mu.Unlock()
				return errors.New("fail after a while")
			}
			return block(ctx)
		}})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	for runs.Load() < 5 {
		time.Sleep(time.Millisecond)
	}
	s.waitState(t, "svc", StateRunning)
	want := []time.Duration{time.Second, 2 * time.Second, time.Second, 2 * time.Second}
	if got := s.delays.get(); !slices.Equal(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
}

// The "done when": a service that panics in a loop is restarted
// with backoff, then parked, visible in `services` and in the log, while
// the others keep running.
func TestPanicLoopParked(t *testing.T) {
	s := newSup(t)
	events := s.bus.Service.Subscribe(256)
	var crashing atomic.Bool
	crashing.Store(true)
	var crashRuns, steadyRuns atomic.Int32
	steadyStop := make(chan struct{})
	if err := s.Add(Service{Name: "steady", Run: func(ctx context.Context) error {
		steadyRuns.Add(1)
		<-ctx.Done()
		close(steadyStop)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(Service{Name: "crashy", MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		CrashLoop: 5, CrashWindow: time.Hour,
		Run: func(ctx context.Context) error {
			crashRuns.Add(1)
			if crashing.Load() {
				var m map[string]int
				m["boom"]++ // a nil map write: a runtime panic
			}
			return block(ctx)
		}}); err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	s.waitState(t, "steady", StateRunning)
	for steadyRuns.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	st := s.waitState(t, "crashy", StateParked)
	if st.Restarts != 4 || crashRuns.Load() != 5 || st.Panics != 5 || !strings.HasPrefix(st.LastErr, "panic: assignment to entry in nil map") {
		t.Errorf("parked status %+v, runs %d", st, crashRuns.Load())
	}
	ms := time.Millisecond
	if got, want := s.delays.get(), []time.Duration{10 * ms, 20 * ms, 40 * ms, 40 * ms}; !slices.Equal(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
	if st := s.status("steady"); st.State != StateRunning || steadyRuns.Load() != 1 {
		t.Errorf("steady disturbed: %+v, runs %d", st, steadyRuns.Load())
	}
	select {
	case <-steadyStop:
		t.Error("steady was stopped")
	default:
	}

	log := s.log.String()
	var panicLines, parkLines int
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "level=ERROR") && strings.Contains(line, "service=crashy") {
			if strings.Contains(line, "service panicked") && strings.Contains(line, "stack=") && strings.Contains(line, "TestPanicLoopParked") {
				panicLines++
			}
			if strings.Contains(line, "parked") {
				parkLines++
			}
		}
	}
	if panicLines != 5 || parkLines != 1 {
		t.Errorf("log: %d panic lines with stack, %d parked lines; want 5 and 1:\n%s", panicLines, parkLines, log)
	}

	var table bytes.Buffer
	if err := s.Command(&table, nil); err != nil {
		t.Fatal(err)
	}
	if !regexpLine(table.String(), `^crashy +parked +4 +- +panic: assignment to entry in nil map$`) ||
		!regexpLine(table.String(), `^steady +running +0 +\d+s +-$`) {
		t.Errorf("services table:\n%s", table.String())
	}

	// The bus saw the crash loop: running, backoff, ..., parked.
	var states []string
	for len(events.C()) > 0 {
		ev := <-events.C()
		if ev.Service == "crashy" {
			states = append(states, ev.State)
		}
	}
	if len(states) == 0 || states[len(states)-1] != StateParked || !slices.Contains(states, StateBackoff) {
		t.Errorf("bus states %v", states)
	}

	// StartService un-parks it with a fresh crash count.
	crashing.Store(false)
	if err := s.StartService("crashy"); err != nil {
		t.Fatal(err)
	}
	s.waitState(t, "crashy", StateRunning)
}

func TestDependencyOrder(t *testing.T) {
	s := newSup(t)
	events := s.bus.Service.Subscribe(256)
	var mu sync.Mutex
	var stopped []string
	var bad []string
	svc := func(name string, needs ...string) Service {
		return Service{Name: name, Needs: needs, Run: func(ctx context.Context) error {
			for _, n := range needs {
				if st := statusOf(s.Supervisor, n); st.State != StateRunning {
					mu.Lock()
					bad = append(bad, name+" started while "+n+" is "+st.State)
					mu.Unlock()
				}
			}
			<-ctx.Done()
			mu.Lock()
			stopped = append(stopped, name)
			mu.Unlock()
			return nil
		}}
	}
	// Added in an order that is not the start order for c and d.
	for _, sv := range []Service{svc("a"), svc("b", "a"), svc("d"), svc("c", "b", "d")} {
		if err := s.Add(sv); err != nil {
			t.Fatal(err)
		}
	}
	for _, sv := range []Service{svc("a"), svc("x", "nope"), svc("self", "self"), {Name: "", Run: block}, {Name: "nil"}} {
		if err := s.Add(sv); err == nil {
			t.Errorf("Add(%q needs %v) accepted", sv.Name, sv.Needs)
		}
	}
	s.Start(context.Background())
	for _, n := range []string{"a", "b", "c", "d"} {
		s.waitState(t, n, StateRunning)
	}
	if err := s.Stop(waitLong); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("started too early: %v", bad)
	}
	// Stop: dependents first (reverse of the Add order).
	if want := []string{"c", "d", "b", "a"}; !slices.Equal(stopped, want) {
		t.Errorf("stop order %v, want %v", stopped, want)
	}
	// On the bus, each service is running only after what it needs.
	pos := map[string]int{}
	i := 0
	for len(events.C()) > 0 {
		ev := <-events.C()
		if ev.State == StateRunning {
			pos[ev.Service] = i
		}
		i++
	}
	if !(pos["a"] < pos["b"] && pos["b"] < pos["c"] && pos["d"] < pos["c"]) {
		t.Errorf("running order on the bus %v", pos)
	}
}

func statusOf(s *Supervisor, name string) Status {
	for _, st := range s.Status() {
		if st.Name == name {
			return st
		}
	}
	return Status{}
}

// A service whose need failed waits until the need runs again.
func TestNeedFailedWaits(t *testing.T) {
	s := newSup(t)
	var broken atomic.Bool
	broken.Store(true)
	var appRuns atomic.Int32
	s.Add(Service{Name: "db", Restart: Never, Run: func(ctx context.Context) error {
		if broken.Load() {
			return errors.New("corrupt")
		}
		return block(ctx)
	}})
	s.Start(context.Background())
	s.waitState(t, "db", StateFailed)
	// Added after Start: it starts at once, but db is not running.
	if err := s.Add(Service{Name: "app", Needs: []string{"db"}, Run: func(ctx context.Context) error { appRuns.Add(1); return block(ctx) }}); err != nil {
		t.Fatal(err)
	}
	s.waitState(t, "app", StateWaiting)
	if appRuns.Load() != 0 {
		t.Fatal("app ran without db")
	}
	broken.Store(false)
	if err := s.StartService("db"); err != nil {
		t.Fatal(err)
	}
	s.waitState(t, "app", StateRunning)
}

// A service that ignores ctx is reported after its StopTimeout; Stop goes
// on and stops the others.
func TestStopTimeout(t *testing.T) {
	s := newSup(t)
	stuck := make(chan struct{})
	defer close(stuck)
	var politeStopped atomic.Bool
	s.Add(Service{Name: "polite", Run: func(ctx context.Context) error { <-ctx.Done(); politeStopped.Store(true); return nil }})
	s.Add(Service{Name: "stubborn", StopTimeout: 50 * time.Millisecond, Run: func(ctx context.Context) error { <-stuck; return nil }})
	s.Start(context.Background())
	s.waitState(t, "stubborn", StateRunning)
	s.waitState(t, "polite", StateRunning)
	err := s.Stop(waitLong)
	var se *StopError
	if !errors.As(err, &se) || !slices.Equal(se.Services, []string{"stubborn"}) {
		t.Fatalf("Stop = %v, want stubborn reported", err)
	}
	if !politeStopped.Load() {
		t.Error("polite was not stopped after stubborn timed out")
	}
	if st := s.status("stubborn"); st.State != StateStopping || st.LastErr != "did not stop in time" {
		t.Errorf("stubborn %+v", st)
	}
	if st := s.status("polite"); st.State != StateStopped {
		t.Errorf("polite %+v", st)
	}
	if log := s.log.String(); !strings.Contains(log, "did not stop") || !strings.Contains(log, "service=stubborn") {
		t.Errorf("not logged:\n%s", log)
	}
	if err := s.StartService("polite"); err == nil {
		t.Error("StartService after Stop accepted")
	}
}

// The overall deadline bounds Stop even when a service's own StopTimeout
// is longer; the services after it are still cancelled.
func TestStopDeadline(t *testing.T) {
	s := newSup(t)
	stuck := make(chan struct{})
	defer close(stuck)
	politeDone := make(chan struct{})
	s.Add(Service{Name: "polite", Run: func(ctx context.Context) error { <-ctx.Done(); close(politeDone); return nil }})
	s.Add(Service{Name: "stubborn", StopTimeout: time.Hour, Run: func(ctx context.Context) error { <-stuck; return nil }})
	s.Start(context.Background())
	s.waitState(t, "stubborn", StateRunning)
	s.waitState(t, "polite", StateRunning)
	start := time.Now()
	err := s.Stop(100 * time.Millisecond)
	if elapsed := time.Since(start); elapsed > waitLong {
		t.Errorf("Stop took %v", elapsed)
	}
	var se *StopError
	if !errors.As(err, &se) || se.Services[0] != "stubborn" {
		t.Fatalf("Stop = %v, want stubborn reported first", err)
	}
	select {
	case <-politeDone:
	case <-time.After(waitLong):
		t.Error("polite was not cancelled")
	}
}

func TestServiceCommands(t *testing.T) {
	s := newSup(t)
	var runs atomic.Int32
	s.Add(Service{Name: "dns", Run: func(ctx context.Context) error { runs.Add(1); return block(ctx) }})
	var out bytes.Buffer
	if err := s.Command(&out, []string{"start", "dns"}); err == nil {
		t.Error("start before Start accepted")
	}
	s.Start(context.Background())
	waitRuns := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(waitLong)
		for runs.Load() < n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if runs.Load() != n {
			t.Fatalf("runs %d, want %d", runs.Load(), n)
		}
	}
	waitRuns(1)
	for i, args := range [][]string{{"stop", "dns"}, {"start", "dns"}, {"restart", "dns"}} {
		out.Reset()
		if err := s.Command(&out, args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.HasPrefix(out.String(), "dns: ") {
			t.Errorf("%v printed %q", args, out.String())
		}
		waitRuns(int32(1 + i))
	}
	s.waitState(t, "dns", StateRunning)
	for _, args := range [][]string{{"start", "nope"}, {"frobnicate", "dns"}, {"stop"}, {"stop", "a", "b"}} {
		if err := s.Command(&out, args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	out.Reset()
	s.Command(&out, nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !regexpLine(lines[0], `^NAME +STATE +RESTARTS +UPTIME +LAST-ERROR$`) || !regexpLine(lines[1], `^dns +running +0 +\d+s +-$`) {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestNilBus(t *testing.T) {
	s := New(nil, nil)
	s.Add(Service{Name: "a", Run: block})
	s.Start(context.Background())
	if err := s.Stop(waitLong); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st[0].State != StateStopped {
		t.Errorf("%+v", st)
	}
}

// lineConn dials ln and returns the connection with a line reader.
func lineConn(t *testing.T, ln net.Listener) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitLong))
	return c, bufio.NewReader(c)
}

// echo is a handler: echoes lines; "panic" panics.
func echo(ctx context.Context, c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if line == "panic\n" {
			panic("handler bug")
		}
		io.WriteString(c, line)
	}
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, msg string) {
	t.Helper()
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil || got != msg+"\n" {
		t.Fatalf("echo %q: got %q, %v", msg, got, err)
	}
}

func TestListener(t *testing.T) {
	s := newSup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := s.AddListener("ssh", ln, 2, echo); err != nil {
		t.Fatal(err)
	}
	if err := s.AddListener("bad", ln, 0, echo); err == nil {
		t.Error("maxConns 0 accepted")
	}
	s.Start(context.Background())
	s.waitState(t, "ssh", StateListening)

	c1, r1 := lineConn(t, ln)
	roundTrip(t, c1, r1, "one")
	c2, r2 := lineConn(t, ln)
	roundTrip(t, c2, r2, "two")
	// A third connection is over maxConns: closed at once.
	_, r3 := lineConn(t, ln)
	if _, err := r3.ReadString('\n'); err == nil {
		t.Error("third connection served")
	}
	// A handler panic closes that connection only.
	io.WriteString(c2, "panic\n")
	if _, err := r2.ReadString('\n'); err == nil {
		t.Error("panicked connection still open")
	}
	roundTrip(t, c1, r1, "still here")
	// Its slot is free again.
	c4, r4 := lineConn(t, ln)
	deadline := time.Now().Add(waitLong)
	for s.status("ssh").Conns < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	roundTrip(t, c4, r4, "four")

	st := s.status("ssh")
	if st.State != StateListening || st.Conns != 3 || st.Rejected != 1 || st.Panics != 1 || st.LastErr != "panic: handler bug" {
		t.Errorf("status %+v", st)
	}
	if log := s.log.String(); !strings.Contains(log, "service=ssh") || !strings.Contains(log, "stack=") || !strings.Contains(log, "echo") {
		t.Errorf("panic log:\n%s", log)
	}

	// Stop closes the connections; the listener stays usable for a restart.
	if err := s.StopService("ssh"); err != nil {
		t.Fatal(err)
	}
	if _, err := r1.ReadString('\n'); err == nil {
		t.Error("connection open after stop")
	}
	if st := s.status("ssh"); st.State != StateStopped {
		t.Errorf("after stop %+v", st)
	}
	if err := s.StartService("ssh"); err != nil {
		t.Fatal(err)
	}
	s.waitState(t, "ssh", StateListening)
	c5, r5 := lineConn(t, ln)
	roundTrip(t, c5, r5, "five")
}

// fakeListener fails Accept with a transient error a few times, has no
// SetDeadline, and reports Close.
type fakeListener struct {
	fails  atomic.Int32
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (f *fakeListener) Accept() (net.Conn, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errors.New("accept: too many open files")
	}
	select {
	case c := <-f.conns:
		return c, nil
	case <-f.closed:
		return nil, net.ErrClosed
	}
}
func (f *fakeListener) Close() error   { f.once.Do(func() { close(f.closed) }); return nil }
func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

func TestListenerAcceptRetryAndClose(t *testing.T) {
	s := newSup(t)
	fl := &fakeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	fl.fails.Store(9)
	served := make(chan struct{}, 1)
	if err := s.AddListener("web", fl, 4, func(ctx context.Context, c net.Conn) { served <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background())
	a, b := net.Pipe()
	defer a.Close()
	fl.conns <- b
	<-served
	ms := time.Millisecond
	want := []time.Duration{5 * ms, 10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, 1000 * ms}
	if got := s.delays.get(); !slices.Equal(got, want) {
		t.Errorf("accept retries %v, want %v", got, want)
	}
	if err := s.Stop(waitLong); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fl.closed:
	default:
		t.Error("listener without SetDeadline not closed on stop")
	}
}

// A listener closed under the service ends it as failed, not in a loop.
func TestListenerClosed(t *testing.T) {
	s := newSup(t)
	fl := &fakeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	s.AddListener("web", fl, 1, func(context.Context, net.Conn) {})
	s.Start(context.Background())
	s.waitState(t, "web", StateListening)
	fl.Close()
	st := s.waitState(t, "web", StateFailed)
	if !strings.Contains(st.LastErr, "closed") {
		t.Errorf("%+v", st)
	}
}

func regexpLine(text, pattern string) bool {
	re := regexp.MustCompile(pattern)
	for _, line := range strings.Split(text, "\n") {
		if re.MatchString(strings.TrimRight(line, " ")) {
			return true
		}
	}
	return false
}
