package intr

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Handler services one interrupt: it reads the device's cause and clears it.
// It runs on its line's own goroutine, never in trap context, and may block.
type Handler func()

// Stats are a line's counters.
type Stats struct {
	// Fired counts occurrences reported by the Source, including coalesced ones.
	Fired uint64
	// Runs counts handler invocations. Fired-Runs occurrences arrived while
	// the handler was busy and were folded into a later run.
	Runs uint64
	// Errors counts failed Ack/Unmask calls (each is also reported to the
	// dispatcher's error hook).
	Errors uint64
}

type line struct {
	name  string
	h     Handler
	done  chan struct{}
	fired atomic.Uint64
	runs  atomic.Uint64
	errs  atomic.Uint64
}

// Dispatcher runs one goroutine per registered line of one controller.
type Dispatcher struct {
	ctl Controller
	src Source

	mu    sync.Mutex
	lines map[int]*line

	// OnError, if set before the first Register, receives Ack/Unmask failures.
	OnError func(line int, err error)
}

// NewDispatcher returns a dispatcher for ctl's lines, fed by src.
func NewDispatcher(ctl Controller, src Source) *Dispatcher {
	return &Dispatcher{ctl: ctl, src: src, lines: make(map[int]*line)}
}

// Controller returns the controller this dispatcher drives.
func (d *Dispatcher) Controller() Controller { return d.ctl }

// Register installs h for ln, starts its goroutine and unmasks the line.
func (d *Dispatcher) Register(ln int, name string, h Handler) error {
	if err := CheckLine(d.ctl, ln); err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("intr: nil handler for %s line %d", d.ctl.Name(), ln)
	}
	d.mu.Lock()
	if old, ok := d.lines[ln]; ok {
		d.mu.Unlock()
		return fmt.Errorf("%w: %s line %d (%s)", ErrRegistered, d.ctl.Name(), ln, old.name)
	}
	l := &line{name: name, h: h, done: make(chan struct{})}
	d.lines[ln] = l
	d.mu.Unlock()

	go d.serve(ln, l)
	if err := d.ctl.Unmask(ln); err != nil {
		_ = d.Unregister(ln)
		return err
	}
	return nil
}

// Unregister masks ln, stops its goroutine and waits for it to finish.
func (d *Dispatcher) Unregister(ln int) error {
	if err := CheckLine(d.ctl, ln); err != nil {
		return err
	}
	d.mu.Lock()
	l, ok := d.lines[ln]
	delete(d.lines, ln)
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s line %d", ErrNotHandled, d.ctl.Name(), ln)
	}
	merr := d.ctl.Mask(ln)
	cerr := d.src.Close(ln)
	<-l.done
	if merr != nil {
		return merr
	}
	return cerr
}

// Stats returns ln's counters.
func (d *Dispatcher) Stats(ln int) (Stats, error) {
	d.mu.Lock()
	l, ok := d.lines[ln]
	d.mu.Unlock()
	if !ok {
		return Stats{}, fmt.Errorf("%w: %s line %d", ErrNotHandled, d.ctl.Name(), ln)
	}
	return Stats{Fired: l.fired.Load(), Runs: l.runs.Load(), Errors: l.errs.Load()}, nil
}

// profileResync is how many handler runs a line's goroutine makes between
// passes through the scheduler. The runtime turns CPU profiling on or off
// for a thread only when it schedules a goroutine on it (runtime/proc.go,
// execute: the M's profilehz), and the thread serving a line never gets
// there on its own: it returns from its blocking Wait straight into the
// same goroutine. Until it does, the runtime drops the thread's SIGPROFs,
// and a profile shows no interrupt handler at all (the whole receive path
// of a router). A yield every profileResync runs costs one pass through
// the scheduler per that many interrupts.
const profileResync = 64

func (d *Dispatcher) serve(ln int, l *line) {
	defer close(l.done)
	needsAck := d.ctl.NeedsAck()
	for k := 1; ; k++ {
		n, err := d.src.Wait(ln)
		if err != nil {
			return
		}
		l.fired.Add(uint64(n))
		l.h()
		l.runs.Add(1)
		if k%profileResync == 0 {
			runtime.Gosched()
		}
		if needsAck {
			if err := d.ctl.Ack(ln); err != nil {
				d.fail(ln, l, err)
			}
		}
		if err := d.ctl.Unmask(ln); err != nil {
			d.fail(ln, l, err)
		}
	}
}

func (d *Dispatcher) fail(ln int, l *line, err error) {
	l.errs.Add(1)
	if d.OnError != nil {
		d.OnError(ln, err)
	}
}
