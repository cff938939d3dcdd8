package event

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"
)

func TestOrderPerSubscriber(t *testing.T) {
	tp := NewTopic[int]("n", 0)
	a, b := tp.Subscribe(1000), tp.Subscribe(1000)
	defer a.Close()
	defer b.Close()
	for i := 0; i < 1000; i++ {
		tp.Publish(i)
	}
	for _, s := range []*Sub[int]{a, b} {
		for i := 0; i < 1000; i++ {
			if v := <-s.C(); v != i {
				t.Fatalf("event %d: got %d", i, v)
			}
		}
		if s.Dropped() != 0 {
			t.Fatalf("dropped %d with room", s.Dropped())
		}
	}
}

// Concurrent publishers: every subscriber sees the same total order, and
// each publisher's own events in its order.
func TestConcurrentPublishersOneOrder(t *testing.T) {
	const pubs, per = 4, 500
	tp := NewTopic[[2]int]("n", 0)
	subs := []*Sub[[2]int]{tp.Subscribe(pubs * per), tp.Subscribe(pubs * per)}
	var wg sync.WaitGroup
	for p := 0; p < pubs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				tp.Publish([2]int{p, i})
			}
		}()
	}
	wg.Wait()
	var first [][2]int
	for si, s := range subs {
		next := make([]int, pubs)
		for i := 0; i < pubs*per; i++ {
			v := <-s.C()
			if v[1] != next[v[0]] {
				t.Fatalf("sub %d: publisher %d event %d arrived when %d was due", si, v[0], v[1], next[v[0]])
			}
			next[v[0]]++
			if si == 0 {
				first = append(first, v)
			} else if first[i] != v {
				t.Fatalf("subscribers disagree at %d: %v vs %v", i, first[i], v)
			}
		}
	}
}

// A subscriber that never reads: the publisher never blocks, the oldest
// events are dropped and counted, the queue holds the newest, and other
// subscribers lose nothing.
func TestStalledSubscriberDropsOldest(t *testing.T) {
	const n = 20000
	tp := NewTopic[int]("n", 0)
	stalled := tp.Subscribe(4)
	live := tp.Subscribe(n) // room for everything: it must lose nothing
	got := make(chan int, n)
	go func() {
		for v := range live.C() {
			got <- v
		}
		close(got)
	}()
	done := make(chan struct{})
	go func() {
		for i := 0; i < n; i++ {
			tp.Publish(i)
		}
		close(done)
	}()
	// 20000 non-blocking publishes take milliseconds (a second or so
	// under qemu-user); blocking on the stalled queue would take forever.
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked behind a stalled subscriber")
	}
	if d := stalled.Dropped(); d != n-4 {
		t.Errorf("stalled subscriber dropped %d, want %d", d, n-4)
	}
	for i := n - 4; i < n; i++ {
		if v := <-stalled.C(); v != i {
			t.Errorf("stalled queue holds %d, want %d (the newest)", v, i)
		}
	}
	live.Close()
	i := 0
	for v := range got {
		if v != i {
			t.Fatalf("live subscriber got %d, want %d", v, i)
		}
		i++
	}
	if i != n || live.Dropped() != 0 {
		t.Errorf("live subscriber got %d events, dropped %d", i, live.Dropped())
	}
	if s := tp.Stats(); s.Published != n || s.Dropped != n-4 || s.Subscribers != 1 {
		t.Errorf("stats %+v", s)
	}
	stalled.Close()
}

func TestStateTopicReplaysLast(t *testing.T) {
	bus := NewBus()
	if _, ok := bus.WAN.Last(); ok {
		t.Fatal("Last before any publish")
	}
	early := bus.WAN.Subscribe(0)
	defer early.Close()
	select {
	case v := <-early.C():
		t.Fatalf("early subscriber got %v before anything was published", v)
	default:
	}
	up := WANUp{Addr: netip.MustParsePrefix("203.0.113.7/24"), Router: netip.MustParseAddr("203.0.113.1"),
		DNS: []netip.Addr{netip.MustParseAddr("203.0.113.53")}}
	bus.WAN.Publish(Down("boot"))
	bus.WAN.Publish(Up(up))
	late := bus.WAN.Subscribe(0)
	defer late.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, err := late.Next(ctx)
	if err != nil || !v.Up || v.Info.Addr != up.Addr || v.Info.Router != up.Router {
		t.Fatalf("late subscriber: %+v, %v", v, err)
	}
	if _, err := late.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("late subscriber got a second (stale) event: %v", err)
	}
	if v, _ := early.Next(ctx); v.Up {
		t.Fatal("early subscriber: first event should be the down")
	}
	if v, _ := early.Next(ctx); !v.Up {
		t.Fatal("early subscriber: second event should be the up")
	}

	// An event topic replays nothing but still knows Last.
	bus.Link.Publish(LinkChange{Port: "lan1", Up: true, SpeedMbps: 1000})
	ls := bus.Link.Subscribe(0)
	defer ls.Close()
	select {
	case v := <-ls.C():
		t.Fatalf("event topic replayed %v", v)
	default:
	}
	if v, ok := bus.Link.Last(); !ok || v.Port != "lan1" {
		t.Fatalf("Last = %v %v", v, ok)
	}
}

func TestCloseEndsSubscription(t *testing.T) {
	tp := NewTopic[int]("n", 0)
	s := tp.Subscribe(4)
	tp.Publish(1)
	s.Close()
	s.Close() // idempotent
	tp.Publish(2)
	if v, err := s.Next(context.Background()); v != 1 || err != nil {
		t.Fatalf("queued event after Close: %d %v", v, err)
	}
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after drain: %v", err)
	}
	if n := tp.Stats().Subscribers; n != 0 {
		t.Fatalf("%d subscribers after Close", n)
	}
}

// Subscribing and unsubscribing while others publish, under -race: no
// send on a closed channel, no lost ordering for steady subscribers.
func TestChurnDuringPublish(t *testing.T) {
	tp := NewStateTopic[int]("n", 8)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 20000; i++ {
				tp.Publish(i)
			}
		}()
	}
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				s := tp.Subscribe(2)
				for k := 0; k < 3; k++ {
					select {
					case <-s.C():
					case <-time.After(time.Millisecond):
					}
				}
				go s.Close() // close from another goroutine than the reader
				for range s.C() {
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a reader that keeps up and checks the state is sane
		defer wg.Done()
		s := tp.Subscribe(64)
		defer s.Close()
		for ctx.Err() == nil {
			if _, err := s.Next(ctx); err != nil && ctx.Err() == nil {
				t.Error(err)
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	wg.Wait()
}

func TestPublishAllocs(t *testing.T) {
	bus := NewBus()
	subs := []*Sub[WAN]{bus.WAN.Subscribe(0), bus.WAN.Subscribe(0), bus.WAN.Subscribe(0)}
	v := Up(WANUp{Addr: netip.MustParsePrefix("198.51.100.2/30"), DNS: []netip.Addr{netip.MustParseAddr("198.51.100.1")}})
	n := testing.AllocsPerRun(1000, func() {
		bus.WAN.Publish(v)
		for _, s := range subs {
			<-s.C()
		}
	})
	if n != 0 {
		t.Fatalf("Publish with keeping-up subscribers: %v allocs/op", n)
	}
	// A full queue (the drop path) does not allocate either.
	n = testing.AllocsPerRun(1000, func() { bus.WAN.Publish(v) })
	if n != 0 {
		t.Fatalf("Publish dropping: %v allocs/op", n)
	}
}

func BenchmarkPublish(b *testing.B) {
	for _, nsubs := range []int{1, 4} {
		b.Run(map[int]string{1: "1sub", 4: "4subs"}[nsubs], func(b *testing.B) {
			tp := NewTopic[LinkChange]("link", 0)
			var subs []*Sub[LinkChange]
			for i := 0; i < nsubs; i++ {
				subs = append(subs, tp.Subscribe(0))
			}
			v := LinkChange{Port: "lan1", Up: true, SpeedMbps: 1000}
			b.ReportAllocs()
			for b.Loop() {
				tp.Publish(v)
				for _, s := range subs {
					<-s.C()
				}
			}
		})
	}
}
