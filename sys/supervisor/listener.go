package supervisor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Accept retry delays for errors other than a closed listener (out of
// file descriptors or memory, a connection reset before accept): start
// small, double, and cap at a second, as net/http's Server.Serve does.
const (
	acceptRetryMin = 5 * time.Millisecond
	acceptRetryMax = time.Second
)

// listener is the state of an AddListener service.
type listener struct {
	s        *Supervisor
	name     string
	ln       net.Listener
	maxConns int
	handle   func(ctx context.Context, c net.Conn)

	conns, rejected, panics atomic.Uint64

	mu     sync.Mutex
	active map[net.Conn]struct{}
}

// AddListener adds an on-demand service: the supervisor accepts on ln and
// runs handle(ctx, conn) in its own goroutine per connection, at most
// maxConns at once (extra connections are closed and counted as
// rejected). A handler panic is recovered, logged with its stack, counted,
// and closes only that connection. The handler owns the connection but
// need not close it: it is closed when handle returns.
//
// The service is "listening" while it accepts. Stopping it (Stop,
// StopService) unblocks Accept with a deadline when ln supports one (so
// StartService can accept on it again) or else closes ln, cancels the
// handlers' ctx and closes their connections. A closed listener ends the
// service as "failed".
func (s *Supervisor) AddListener(name string, ln net.Listener, maxConns int, handle func(ctx context.Context, c net.Conn)) error {
	if ln == nil || handle == nil {
		return fmt.Errorf("supervisor: listener %q: nil listener or handler", name)
	}
	if maxConns < 1 {
		return fmt.Errorf("supervisor: listener %q: maxConns %d, want at least 1", name, maxConns)
	}
	l := &listener{s: s, name: name, ln: ln, maxConns: maxConns, handle: handle, active: make(map[net.Conn]struct{})}
	// The accept loop handles its own errors; it returns only when
	// stopped or when the listener is gone for good.
	svc := withDefaults(Service{Name: name, Restart: Never, Run: l.run})
	return s.add(&unit{svc: svc, listener: l})
}

// deadliner is a listener whose Accept can be interrupted without
// closing it (*net.TCPListener, *net.UnixListener).
type deadliner interface{ SetDeadline(time.Time) error }

func (l *listener) run(ctx context.Context) error {
	dl, canDeadline := l.ln.(deadliner)
	if canDeadline {
		// Clear a deadline left by an earlier stop, before arming the
		// stop below (which sets one).
		if err := dl.SetDeadline(time.Time{}); err != nil {
			canDeadline = false
		}
	}
	stopAccept := context.AfterFunc(ctx, func() {
		if canDeadline && dl.SetDeadline(time.Unix(1, 0)) == nil {
			return
		}
		l.ln.Close()
	})
	defer stopAccept()

	var handlers sync.WaitGroup
	defer func() {
		// Handlers get ctx's cancellation; closing their connections
		// also ends those blocked in a read that ignore ctx.
		l.mu.Lock()
		for c := range l.active {
			c.Close()
		}
		l.mu.Unlock()
		handlers.Wait()
	}()

	retry := time.Duration(0)
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("listener closed: %w", err)
			}
			retry = min(max(2*retry, acceptRetryMin), acceptRetryMax)
			l.s.log.Warn("accept failed, retrying", "service", l.name, "err", err, "retry", retry.String())
			t := l.s.newTimer(retry)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C():
			}
			continue
		}
		retry = 0
		l.mu.Lock()
		if len(l.active) >= l.maxConns {
			l.mu.Unlock()
			l.rejected.Add(1)
			c.Close()
			continue
		}
		l.active[c] = struct{}{}
		l.mu.Unlock()
		l.conns.Add(1)
		handlers.Add(1)
		go l.serve(ctx, c, &handlers)
	}
}

// serve runs the handler for one connection, recovering a panic.
func (l *listener) serve(ctx context.Context, c net.Conn, wg *sync.WaitGroup) {
	defer wg.Done()
	defer func() {
		if r := recover(); r != nil {
			l.panics.Add(1)
			l.s.log.Error("connection handler panicked", "service", l.name, "remote", addrString(c.RemoteAddr()),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			l.s.mu.Lock()
			if u := l.s.byName[l.name]; u != nil {
				u.lastErr = panicError(r).Error()
			}
			l.s.mu.Unlock()
		}
		// Free the slot before closing, so a peer that sees the close
		// can connect again at once.
		l.mu.Lock()
		delete(l.active, c)
		l.mu.Unlock()
		c.Close()
	}()
	l.handle(ctx, c)
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}
