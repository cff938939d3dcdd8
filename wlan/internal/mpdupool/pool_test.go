package mpdupool

import (
	"testing"

	"github.com/gowrt/gowrt/wlan/radio"
)

// slowRadio keeps every request until complete is called, like a radio
// whose queue is busy; it refuses when full.
type slowRadio struct {
	radio.Radio
	held []*radio.TxRequest
	max  int
	st   radio.TxStatus
}

func (r *slowRadio) Transmit(req *radio.TxRequest) error {
	if len(r.held) == r.max {
		return radio.ErrQueueFull
	}
	r.held = append(r.held, req)
	return nil
}

func (r *slowRadio) complete(acked bool) {
	for _, req := range r.held {
		r.st = radio.TxStatus{Acked: acked}
		req.Done(req, &r.st)
	}
	r.held = r.held[:0]
}

// Frames lent to the radio come back at Done; a refused one comes back at
// once; an empty pool says so instead of allocating.
func TestPoolBounded(t *testing.T) {
	var acked, failed int
	p := New(3, 64, func(_ *radio.TxRequest, st *radio.TxStatus) {
		if st.Acked {
			acked++
		} else {
			failed++
		}
	})
	r := &slowRadio{max: 2}
	series := [radio.MaxSeries]radio.Series{{Tries: 1}}
	for i := 0; i < 2; i++ {
		f := p.Get()
		if err := p.Submit(r, f, append(f.Buf[:0], byte(i)), radio.NoKey, false, &series); err != nil {
			t.Fatal(err)
		}
	}
	f := p.Get()
	if err := p.Submit(r, f, f.Buf[:1], radio.NoKey, false, &series); err != radio.ErrQueueFull {
		t.Fatalf("third submit: %v", err)
	}
	// The refused frame is back: one free, then none.
	back := p.Get()
	if back == nil {
		t.Fatal("refused frame not returned")
	}
	if p.Get() != nil {
		t.Fatal("pool larger than 3")
	}
	p.Put(back)
	r.complete(true)
	var got []*Frame
	for f := p.Get(); f != nil; f = p.Get() {
		got = append(got, f)
	}
	if acked != 2 || len(got) != 3 {
		t.Fatalf("acked %d, %d frames free after completion; want 2, 3", acked, len(got))
	}
	for _, f := range got {
		p.Put(f)
	}
	if a := testing.AllocsPerRun(100, func() {
		f := p.Get()
		_ = p.Submit(r, f, f.Buf[:1], radio.NoKey, true, &series)
		r.complete(false)
	}); a != 0 {
		t.Errorf("%v allocations per frame", a)
	}
}
