// Package event is the router's event bus: typed topics that goroutines
// publish to and subscribe to, so that "WAN is up" can drive routes, the
// NAT address, the firewall and SNTP without those packages knowing each
// other.
//
// A Topic[T] carries one event type. Every subscriber has its own bounded
// queue and sees the topic's events in the order they were published (all
// subscribers see the same order). Publish never blocks: when a
// subscriber's queue is full its oldest queued event is discarded to make
// room and counted in that subscriber's Dropped, so a slow subscriber can
// neither stall the publisher (often the network path) nor make the
// others wait, and what it reads next is the newest state. A subscriber
// that sees Dropped grow knows it missed events and can resynchronise
// from the source (or from Last).
//
// A state topic (NewStateTopic) hands a new subscriber the latest value
// first, so a service that subscribes after the WAN came up still learns
// that it is up. Every topic remembers its latest value (Last).
//
// Publish does not allocate when the subscribers keep up: it takes the
// topic's mutex, stores the value and does non-blocking channel sends.
package event

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// DefaultQueue is the queue length of a subscriber that asks for none.
// Router events are rare (link, address and WAN changes, a sync per
// poll): 16 rides out a burst such as every port's link change at boot.
const DefaultQueue = 16

// ErrClosed is returned by Sub.Next once the subscription is closed and
// its queue is drained.
var ErrClosed = errors.New("event: subscription closed")

// Topic is one typed stream of events. The zero value is not usable; make
// topics with NewTopic or NewStateTopic.
type Topic[T any] struct {
	name  string
	queue int  // default queue length of its subscribers
	state bool // replay the latest value to new subscribers

	mu      sync.Mutex // orders Publish, Subscribe and Close
	subs    []*Sub[T]
	last    T
	hasLast bool

	published atomic.Uint64
	dropped   atomic.Uint64 // sum over all subscribers, closed ones included
}

// NewTopic makes an event topic: subscribers see what is published after
// they subscribe. queue is the default queue length of its subscribers
// (DefaultQueue if queue <= 0).
func NewTopic[T any](name string, queue int) *Topic[T] {
	if queue <= 0 {
		queue = DefaultQueue
	}
	return &Topic[T]{name: name, queue: queue}
}

// NewStateTopic makes a topic whose values are states (WAN up or down,
// clock synced): a new subscriber first receives the latest value, if
// any, then everything published after it.
func NewStateTopic[T any](name string, queue int) *Topic[T] {
	t := NewTopic[T](name, queue)
	t.state = true
	return t
}

// Name returns the topic's name.
func (t *Topic[T]) Name() string { return t.name }

// Publish delivers v to every subscriber's queue and records it as the
// latest value. It never blocks: a full queue loses its oldest event
// (counted in that subscriber's Dropped). Safe for concurrent use; events
// published concurrently are delivered in one order to all subscribers.
func (t *Topic[T]) Publish(v T) {
	t.mu.Lock()
	t.last, t.hasLast = v, true
	t.published.Add(1)
	for _, s := range t.subs {
		s.deliver(v)
	}
	t.mu.Unlock()
}

// Last returns the latest published value and whether there is one.
func (t *Topic[T]) Last() (T, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last, t.hasLast
}

// Subscribe adds a subscriber with a queue of queue events (the topic's
// default if queue <= 0). On a state topic its queue starts with the
// latest value, if any. Call Close when done.
func (t *Topic[T]) Subscribe(queue int) *Sub[T] {
	if queue <= 0 {
		queue = t.queue
	}
	s := &Sub[T]{topic: t, ch: make(chan T, queue)}
	t.mu.Lock()
	if t.state && t.hasLast {
		s.ch <- t.last // the queue is new and has room
	}
	t.subs = append(t.subs, s)
	t.mu.Unlock()
	return s
}

// Stats are a topic's counters.
type Stats struct {
	Name        string
	Subscribers int
	Published   uint64
	Dropped     uint64 // events discarded from full queues, all subscribers
}

// Stats returns the topic's counters.
func (t *Topic[T]) Stats() Stats {
	t.mu.Lock()
	n := len(t.subs)
	t.mu.Unlock()
	return Stats{Name: t.name, Subscribers: n, Published: t.published.Load(), Dropped: t.dropped.Load()}
}

// Sub is one subscriber's ordered, bounded queue of a topic's events.
type Sub[T any] struct {
	topic   *Topic[T]
	ch      chan T
	dropped atomic.Uint64
	closed  bool // under topic.mu
}

// deliver queues v, discarding the oldest queued event when the queue is
// full. Called with topic.mu held, so the publisher is the only sender and
// the receive below always makes room for the send after it.
func (s *Sub[T]) deliver(v T) {
	select {
	case s.ch <- v:
		return
	default:
	}
	select {
	case <-s.ch:
	default: // the subscriber just took one itself
	}
	s.dropped.Add(1)
	s.topic.dropped.Add(1)
	s.ch <- v
}

// C returns the channel the events arrive on. It is closed by Close, so
// `for v := range s.C()` ends when the subscription does.
func (s *Sub[T]) C() <-chan T { return s.ch }

// Next waits for the next event. It returns ErrClosed after Close (once
// the queued events are consumed) and ctx.Err() when ctx ends first; a
// queued event is returned even if ctx has already ended.
func (s *Sub[T]) Next(ctx context.Context) (T, error) {
	select {
	case v, ok := <-s.ch:
		if !ok {
			var zero T
			return zero, ErrClosed
		}
		return v, nil
	default:
	}
	select {
	case v, ok := <-s.ch:
		if !ok {
			var zero T
			return zero, ErrClosed
		}
		return v, nil
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// Dropped returns how many events this subscriber lost to a full queue.
func (s *Sub[T]) Dropped() uint64 { return s.dropped.Load() }

// Close unsubscribes: no event is queued after it returns, and C is
// closed (events already queued can still be read). Safe to call more
// than once and concurrently with Publish.
func (s *Sub[T]) Close() {
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for i, x := range t.subs {
		if x == s {
			// Copy rather than shift in place: nothing else holds the
			// slice, but keeping the old backing array untouched makes
			// the removal obviously safe.
			t.subs = append(t.subs[:i:i], t.subs[i+1:]...)
			break
		}
	}
	close(s.ch)
}
