package ehci

import (
	"testing"

	"github.com/gowrt/gowrt/usbnet/usb"
)

// loop is one pipe with one transfer that is submitted and waited for,
// allocation-free, for the allocation test and the benchmarks.
type loop struct {
	p    usb.Pipe
	t    *usb.Transfer
	done chan struct{}
	run  func()
}

func newLoop(tb testing.TB, r *rig, p usb.Pipe, size int, flags usb.Flags) *loop {
	tb.Helper()
	l := &loop{p: p, done: make(chan struct{}, 1)}
	t, err := p.NewTransfer(size)
	if err != nil {
		tb.Fatal(err)
	}
	t.Done = func(*usb.Transfer) { l.done <- struct{}{} }
	t.Flags = flags
	l.t = t
	l.run = func() {
		if err := l.p.Submit(l.t); err != nil {
			panic(err)
		}
		<-l.done
		if l.t.Err != nil {
			panic(l.t.Err)
		}
	}
	return l
}

// TestZeroAllocs: Submit and completion allocate nothing, OUT and IN
// (the model and hwsim run inside the measured loop too).
func TestZeroAllocs(t *testing.T) {
	r := newRig(t, rigOpts{seed: 11})
	out, in := r.bulk(t)
	lo := newLoop(t, r, out, 1536, 0)
	lo.t.Len = 1514
	li := newLoop(t, r, in, 1536, usb.ShortOK)
	msg := pattern(1, 1514)
	r.sys.Do(func() {
		for i := 0; i < 400; i++ {
			r.dev.msgs = append(r.dev.msgs, msg)
		}
	})
	for i := 0; i < 50; i++ {
		lo.run()
		li.run()
	}
	if a := testing.AllocsPerRun(300, lo.run); a != 0 {
		t.Errorf("bulk OUT: %v allocations per transfer", a)
	}
	if a := testing.AllocsPerRun(300, li.run); a != 0 {
		t.Errorf("bulk IN: %v allocations per transfer", a)
	}
	r.noMisuse(t)
}

// BenchmarkBulkOut sends 1514-byte frames, one transfer at a time,
// through the model.
func BenchmarkBulkOut(b *testing.B) {
	r := newRig(b, rigOpts{seed: 12})
	out, _ := r.bulk(b)
	l := newLoop(b, r, out, 1536, 0)
	l.t.Len = 1514
	b.SetBytes(1514)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.run()
	}
}

// BenchmarkBulkIn receives 1514-byte frames into 16 KiB transfers (short
// packet completion), one at a time.
func BenchmarkBulkIn(b *testing.B) {
	r := newRig(b, rigOpts{seed: 13})
	_, in := r.bulk(b)
	l := newLoop(b, r, in, 16384, usb.ShortOK)
	msg := pattern(1, 1514)
	r.sys.Do(func() {
		for i := 0; i < b.N+10; i++ {
			r.dev.msgs = append(r.dev.msgs, msg)
		}
	})
	b.SetBytes(1514)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.run()
	}
}

// BenchmarkBulkOutInFlight sends 1514-byte frames with four transfers in
// flight (the usbnet framework's TX queue depth): the model's pump, not
// the driver, bounds the single-transfer figures above.
func BenchmarkBulkOutInFlight(b *testing.B) {
	r := newRig(b, rigOpts{seed: 14})
	out, _ := r.bulk(b)
	done := make(chan *usb.Transfer, 4)
	for i := 0; i < 4; i++ {
		t, err := out.NewTransfer(1536)
		if err != nil {
			b.Fatal(err)
		}
		t.Done = func(t *usb.Transfer) { done <- t }
		t.Len = 1514
		done <- t
	}
	b.SetBytes(1514)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := <-done
		if t.Err != nil {
			b.Fatal(t.Err)
		}
		if err := out.Submit(t); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < 4; i++ {
		<-done
	}
}
