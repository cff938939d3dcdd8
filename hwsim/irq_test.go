package hwsim_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
)

// queueDevice is a device with a work queue: each item raises an edge; the
// handler drains the whole queue per run. While handling, the device queues
// one more item (an arrival during the handler).
type queueDevice struct {
	sys   *hwsim.System
	ctl   *hwsim.Controller
	line  int
	queue int
	extra int // items still to inject from inside the handler
}

func (d *queueDevice) push() {
	d.sys.Do(func() {
		d.queue++
		d.ctl.Raise(d.line)
	})
}

func (d *queueDevice) handler(served *int, done chan<- struct{}) intr.Handler {
	return func() {
		d.sys.Do(func() {
			*served += d.queue
			d.queue = 0
		})
		if d.extra > 0 {
			d.extra--
			d.push() // arrives while this handler is still running
			return
		}
		select {
		case done <- struct{}{}:
		default:
		}
	}
}

// TestHazardLostInterrupt: an interrupt that arrives while its handler is
// busy must be delivered again. A kernel that drops it (Lossy) leaves work
// stranded; the real Source coalesces and re-delivers.
func TestHazardLostInterrupt(t *testing.T) {
	run := func(lossy bool) (served int, stalled bool) {
		sys := hwsim.New(hwsim.Config{Seed: 6})
		ctl := sys.NewController(hwsim.ControllerConfig{Name: "pic", Lines: 8, Lossy: lossy})
		if err := ctl.SetTrigger(3, intr.Edge); err != nil {
			t.Fatal(err)
		}
		dev := &queueDevice{sys: sys, ctl: ctl, line: 3, extra: 5}
		done := make(chan struct{}, 1)
		d := intr.NewDispatcher(ctl, ctl)
		if err := d.Register(3, "queue", dev.handler(&served, done)); err != nil {
			t.Fatal(err)
		}
		// Let the handler goroutine reach Wait before the first edge.
		for i := 0; i < 1000; i++ {
			if st, _ := d.Stats(3); st.Fired == 0 {
				time.Sleep(time.Millisecond)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
		dev.push()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			stalled = true
		}
		if err := d.Unregister(3); err != nil {
			t.Fatal(err)
		}
		return served, stalled
	}
	if served, stalled := run(true); !stalled {
		t.Fatalf("lossy delivery did not strand work (served %d of 6)", served)
	}
	if served, stalled := run(false); stalled || served != 6 {
		t.Fatalf("coalescing delivery: served %d of 6, stalled=%v", served, stalled)
	}
}

// noAck hides a controller's need for an ack, as a driver that forgets to
// acknowledge the AR934x MISC controller does.
type noAck struct{ *hwsim.Controller }

func (noAck) NeedsAck() bool { return false }

// TestHazardUnackedInterrupt: on a controller that latches status until
// acked, never acking makes the line fire forever; the model reports the
// storm. The Dispatcher acks after the handler and the storm never starts.
func TestHazardUnackedInterrupt(t *testing.T) {
	run := func(forgetAck bool) (storm bool) {
		sys := hwsim.New(hwsim.Config{Seed: 7})
		ctl := sys.NewController(hwsim.ControllerConfig{Name: "misc", Lines: 32, NeedsAck: true})
		var c intr.Controller = ctl
		if forgetAck {
			c = noAck{ctl}
		}
		var mu sync.Mutex
		runs := 0
		d := intr.NewDispatcher(c, ctl)
		if err := d.Register(5, "dev", func() {
			mu.Lock()
			runs++
			mu.Unlock()
			sys.Do(func() { ctl.Lower(5) }) // the device's cause is cleared
		}); err != nil {
			t.Fatal(err)
		}
		sys.Do(func() { ctl.Raise(5) })
		deadline := time.Now().Add(500 * time.Millisecond)
		for time.Now().Before(deadline) {
			mu.Lock()
			n := runs
			mu.Unlock()
			if n > 200 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		_ = d.Unregister(5)
		for _, m := range sys.Misuses() {
			if m.Kind == hwsim.UnackedInterrupt {
				return true
			}
		}
		return false
	}
	if !run(true) {
		t.Fatal("never-acked latched interrupt not reported as a storm")
	}
	if run(false) {
		t.Fatal("acked interrupt reported as a storm")
	}
}

// A controller that needs no ack tolerates one (AR71xx MISC).
func TestAckHarmlessWithoutNeed(t *testing.T) {
	sys := hwsim.New(hwsim.Config{})
	ctl := sys.NewController(hwsim.ControllerConfig{Name: "ar71xx-misc", Lines: 8})
	if err := ctl.Ack(2); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Ack(9); !errors.Is(err, intr.ErrLine) {
		t.Fatalf("ack of line 9 of 8: %v", err)
	}
}

func TestDispatcherMisuse(t *testing.T) {
	sys := hwsim.New(hwsim.Config{})
	ctl := sys.NewController(hwsim.ControllerConfig{Name: "pic", Lines: 4})
	d := intr.NewDispatcher(ctl, ctl)
	if err := d.Register(4, "x", func() {}); !errors.Is(err, intr.ErrLine) {
		t.Fatalf("register out of range: %v", err)
	}
	if err := d.Register(1, "x", nil); err == nil {
		t.Fatal("nil handler accepted")
	}
	if err := d.Unregister(2); !errors.Is(err, intr.ErrNotHandled) {
		t.Fatalf("unregister of an unregistered line: %v", err)
	}
	if _, err := d.Stats(2); !errors.Is(err, intr.ErrNotHandled) {
		t.Fatalf("stats of an unregistered line: %v", err)
	}
	if err := d.Register(1, "a", func() {}); err != nil {
		t.Fatal(err)
	}
	if err := d.Register(1, "b", func() {}); !errors.Is(err, intr.ErrRegistered) {
		t.Fatalf("double register: %v", err)
	}
	if err := d.Unregister(1); err != nil {
		t.Fatal(err)
	}
}
