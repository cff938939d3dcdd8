package hwsim

import (
	"fmt"

	"github.com/gowrt/gowrt/intr"
)

// stormLimit is how many deliveries of a line without any Ack or cause
// change count as an interrupt storm.
const stormLimit = 64

// ControllerConfig describes an interrupt controller model.
type ControllerConfig struct {
	Name  string
	Lines int // at most 64
	// NeedsAck: the controller latches each line's status bit when the line
	// fires and keeps it until Ack, as the AR724x/AR933x/AR934x/QCA955x
	// MISC controllers do. Without an Ack the line fires again as soon as
	// it is unmasked.
	NeedsAck bool
	// Lossy makes the model behave like a broken kernel that drops an
	// interrupt when the line's handler goroutine is not waiting for it.
	// Only hazard tests set it, to show what the real Source prevents.
	Lossy bool
}

// Controller models an interrupt controller and the kernel's trap-side
// delivery. It implements intr.Controller and intr.Source.
type Controller struct {
	sys *System
	cfg ControllerConfig

	trig     []intr.Trigger
	asserted uint64 // level inputs currently driven high
	latched  uint64 // edges seen, or status bits waiting for an Ack
	masked   uint64
	closed   uint64
	waiting  uint64 // lines whose handler is blocked in Wait (Lossy mode)

	fired   []uint32 // occurrences since the last Wait returned
	wake    []chan struct{}
	streak  []int // deliveries with no Ack/Lower in between
	stormed uint64

	Deliveries, Dropped uint64
}

var (
	_ intr.Controller = (*Controller)(nil)
	_ intr.Source     = (*Controller)(nil)
)

// NewController returns a controller model with every line masked and
// level-triggered.
func (s *System) NewController(cfg ControllerConfig) *Controller {
	if cfg.Lines <= 0 || cfg.Lines > 64 {
		panic(fmt.Sprintf("hwsim: controller %q with %d lines", cfg.Name, cfg.Lines))
	}
	c := &Controller{sys: s, cfg: cfg, masked: ^uint64(0),
		trig: make([]intr.Trigger, cfg.Lines), fired: make([]uint32, cfg.Lines),
		wake: make([]chan struct{}, cfg.Lines), streak: make([]int, cfg.Lines)}
	for i := range c.wake {
		c.trig[i] = intr.Level
		c.wake[i] = make(chan struct{}, 1)
	}
	return c
}

func (c *Controller) Name() string   { return c.cfg.Name }
func (c *Controller) Lines() int     { return c.cfg.Lines }
func (c *Controller) NeedsAck() bool { return c.cfg.NeedsAck }

// Raise drives a line from the device side (lock held): a level line is
// asserted until Lower, an edge line records one edge.
func (c *Controller) Raise(line int) {
	bit := uint64(1) << line
	if c.trig[line] == intr.Level {
		if c.asserted&bit == 0 {
			c.streak[line] = 0 // a new cause
		}
		c.asserted |= bit
	} else {
		c.latched |= bit
		c.streak[line] = 0
	}
	if c.cfg.NeedsAck {
		c.latched |= bit
	}
	c.take()
}

// Lower deasserts a level line (the device's cause was cleared). Lock held.
func (c *Controller) Lower(line int) {
	c.asserted &^= uint64(1) << line
	if !c.cfg.NeedsAck {
		// The cause is gone. On an ack-required controller the latched
		// status still fires the line: only an Ack ends that streak.
		c.streak[line] = 0
	}
}

// take is the trap side: every unmasked line with status set is masked,
// counted and its handler woken.
func (c *Controller) take() {
	ready := (c.asserted | c.latched) &^ c.masked
	for ready != 0 {
		line := trailingZeros(ready)
		bit := uint64(1) << line
		ready &^= bit
		c.masked |= bit
		if c.trig[line] == intr.Edge && !c.cfg.NeedsAck {
			c.latched &^= bit // delivered: the edge is consumed
		}
		c.streak[line]++
		if c.streak[line] > stormLimit && c.stormed&bit == 0 {
			c.stormed |= bit
			c.sys.Report(Misuse{Kind: UnackedInterrupt, Addr: uint64(line), Region: c.cfg.Name,
				Detail: fmt.Sprintf("line %d delivered %d times with no ack and no change of cause", line, c.streak[line])})
		}
		if c.cfg.Lossy && c.waiting&bit == 0 {
			c.Dropped++
			continue
		}
		c.Deliveries++
		c.fired[line]++
		select {
		case c.wake[line] <- struct{}{}:
		default:
		}
	}
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

func (c *Controller) Mask(line int) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	c.sys.mu.Lock()
	defer c.sys.mu.Unlock()
	c.masked |= uint64(1) << line
	return nil
}

func (c *Controller) Unmask(line int) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	c.sys.mu.Lock()
	defer c.sys.mu.Unlock()
	c.masked &^= uint64(1) << line
	c.take()
	return nil
}

// Ack clears a latched status bit. On a controller that needs no ack it is
// harmless.
func (c *Controller) Ack(line int) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	c.sys.mu.Lock()
	defer c.sys.mu.Unlock()
	if c.cfg.NeedsAck {
		c.latched &^= uint64(1) << line
		c.streak[line] = 0
		if c.asserted&(uint64(1)<<line) != 0 {
			c.latched |= uint64(1) << line // still asserted: latches again
		}
	}
	return nil
}

func (c *Controller) Pending() uint64 {
	c.sys.mu.Lock()
	defer c.sys.mu.Unlock()
	return c.asserted | c.latched
}

func (c *Controller) SetTrigger(line int, t intr.Trigger) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	if t != intr.Level && t != intr.Edge {
		return fmt.Errorf("%w: %v on %s line %d", intr.ErrTrigger, t, c.cfg.Name, line)
	}
	c.sys.mu.Lock()
	defer c.sys.mu.Unlock()
	c.trig[line] = t
	return nil
}

// Wait implements intr.Source.
func (c *Controller) Wait(line int) (uint32, error) {
	if err := intr.CheckLine(c, line); err != nil {
		return 0, err
	}
	bit := uint64(1) << line
	c.sys.mu.Lock()
	for {
		// Close wins over pending occurrences, so a line that storms can
		// still be shut down.
		if c.closed&bit != 0 {
			c.closed &^= bit
			c.fired[line] = 0
			c.waiting &^= bit
			c.sys.mu.Unlock()
			return 0, intr.ErrClosed
		}
		if n := c.fired[line]; n > 0 {
			c.fired[line] = 0
			c.waiting &^= bit
			c.sys.mu.Unlock()
			return n, nil
		}
		c.waiting |= bit
		c.sys.mu.Unlock()
		<-c.wake[line]
		c.sys.mu.Lock()
	}
}

// Close implements intr.Source.
func (c *Controller) Close(line int) error {
	if err := intr.CheckLine(c, line); err != nil {
		return err
	}
	c.sys.mu.Lock()
	c.closed |= uint64(1) << line
	c.sys.mu.Unlock()
	select {
	case c.wake[line] <- struct{}{}:
	default:
	}
	return nil
}
