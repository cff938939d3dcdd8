package uhci

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// The hazard tests run a driver made to commit one mistake (through a
// wrapped contract or an in-driver hook) over several seeds, and check
// that the model or the data catches it under at least one, while the
// correct driver under the same seeds is never caught.

const hazardPatience = 2 * time.Second

// run submits x and waits for it; on timeout it cancels it.
func run(p usb.Pipe, x *usb.Transfer, ch chan *usb.Transfer) error {
	if err := p.Submit(x); err != nil {
		return err
	}
	select {
	case <-ch:
		return x.Err
	case <-time.After(hazardPatience):
		p.Cancel(x)
		<-ch
		return errors.New("transfer never completed")
	}
}

func controlErr(p usb.Pipe, s usb.Setup) ([]byte, error) {
	x, err := p.NewTransfer(int(s.Length))
	if err != nil {
		return nil, err
	}
	ch := make(chan *usb.Transfer, 1)
	x.Done = func(x *usb.Transfer) { ch <- x }
	x.Setup, x.Len = s, int(s.Length)
	if err := run(p, x, ch); err != nil {
		return nil, fmt.Errorf("%v: %w", s, err)
	}
	return x.Buf[:x.Actual], nil
}

// workload enumerates the device and moves frames both ways with four
// transfers in flight, reporting the first thing that went wrong.
func workload(r *rig, frames int) error {
	if _, err := r.hc.ResetPort(1); err != nil {
		return err
	}
	p0, err := r.hc.OpenPipe(usb.PipeConfig{Type: usb.Control, MaxPacket: 8, Speed: usb.SpeedFull})
	if err != nil {
		return err
	}
	d, err := controlErr(p0, getDescriptor(1, 8))
	if err != nil || !bytes.Equal(d, devDescriptor[:8]) {
		return fmt.Errorf("descriptor at 0: % x %v", d, err)
	}
	if _, err := controlErr(p0, usb.Setup{Request: 5, Value: 5}); err != nil {
		return err
	}
	p5, err := r.hc.OpenPipe(usb.PipeConfig{Address: 5, Type: usb.Control, MaxPacket: 64, Speed: usb.SpeedFull})
	if err != nil {
		return err
	}
	for _, s := range []usb.Setup{getDescriptor(1, 18), getDescriptor(2, 255)} {
		d, err := controlErr(p5, s)
		want := devDescriptor
		if s.Value>>8 == 2 {
			want = devConfig
		}
		if err != nil || !bytes.Equal(d, want) {
			return fmt.Errorf("%v: % x %v", s, d, err)
		}
	}
	in, err := r.hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x82, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		return err
	}
	out, err := r.hc.OpenPipe(usb.PipeConfig{Address: 5, Endpoint: 0x02, Type: usb.Bulk, MaxPacket: devBulkMP, Speed: usb.SpeedFull})
	if err != nil {
		return err
	}
	var want [][]byte
	for i := 0; i < frames; i++ {
		want = append(want, testFrame(i, frameSizes[i%len(frameSizes)]))
	}
	got := make(chan *usb.Transfer, 8)
	for i := 0; i < 4; i++ {
		x, err := in.NewTransfer(2048)
		if err != nil {
			return err
		}
		x.Flags = usb.ShortOK
		x.Done = func(x *usb.Transfer) { got <- x }
		if err := in.Submit(x); err != nil {
			return err
		}
	}
	r.dev.queueIn(want...)
	for i := range want {
		select {
		case x := <-got:
			if x.Err != nil || !bytes.Equal(x.Buf[:x.Actual], want[i]) {
				return fmt.Errorf("in frame %d: %d bytes, want %d, %v", i, x.Actual, len(want[i]), x.Err)
			}
			x.Len = len(x.Buf)
			if err := in.Submit(x); err != nil {
				return err
			}
		case <-time.After(hazardPatience):
			return fmt.Errorf("in frame %d never arrived", i)
		}
	}
	x, err := out.NewTransfer(2048)
	if err != nil {
		return err
	}
	ch := make(chan *usb.Transfer, 1)
	x.Done = func(x *usb.Transfer) { ch <- x }
	x.Flags = usb.ZeroLengthPacket
	for i, f := range want {
		x.Len = copy(x.Buf, f)
		if err := run(out, x, ch); err != nil {
			return fmt.Errorf("out frame %d: %w", i, err)
		}
	}
	rx := r.dev.received()
	for i := range want {
		if i >= len(rx) || !bytes.Equal(rx[i], want[i]) {
			return fmt.Errorf("out frame %d corrupted or lost", i)
		}
	}
	return nil
}

// hazard runs the workload with mistake w and without it under seeds
// 1..seeds; a run with the mistake is caught by a misuse of one of kinds
// or by the workload failing.
func hazard(t *testing.T, w wrong, seeds, frames int, kinds ...hwsim.MisuseKind) {
	t.Helper()
	if w.hooked() && !hazardTag {
		t.Skip("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
	caught := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		for _, bug := range []bool{true, false} {
			ww := wrong{agentRate: w.agentRate}
			if bug {
				ww = w
			}
			// A 1 ms poll: completion passes also run while the
			// controller is mid-frame, not only after its interrupt.
			r := newRig(t, seed, seed%2 == 0, ww, func(c *Config) { c.PortPoll = time.Millisecond })
			err := workload(r, frames)
			r.close()
			ms := r.sys.Misuses()
			if !bug {
				if err != nil {
					t.Errorf("seed %d: correct driver failed: %v", seed, err)
				}
				for _, m := range ms {
					t.Errorf("seed %d: correct driver caught: %v", seed, m)
				}
				continue
			}
			hit := err != nil
			for _, m := range ms {
				for _, k := range kinds {
					if m.Kind == k {
						hit = true
					}
				}
			}
			if hit {
				caught++
				if caught == 1 {
					t.Logf("seed %d: caught: workload %v; misuses %v", seed, err, first(ms))
				}
			}
		}
	}
	if caught == 0 {
		t.Fatalf("the mistake was caught under none of %d seeds", seeds)
	}
	t.Logf("caught under %d/%d seeds", caught, seeds)
}

func first(ms []hwsim.Misuse) any {
	if len(ms) == 0 {
		return "none"
	}
	return ms[0]
}

// TestHazardPublishBeforeComplete: the first TD's control word (Active)
// stored before its token and buffer; the walker runs it half-written
// (a zero token is no PID: process error; a stale one misdirects data).
func TestHazardPublishBeforeComplete(t *testing.T) {
	hazard(t, wrong{publishFirst: true}, 8, 20, hwsim.ModelRule, hwsim.BadDMAAddress)
}

// TestHazardMissingBarrier: TD words in the right program order but no
// barrier before the publishing store; the posted Active store overtakes
// the token.
func TestHazardMissingBarrier(t *testing.T) {
	hazard(t, wrong{noBarriers: true, agentRate: 256}, 16, 60, hwsim.ModelRule, hwsim.BadDMAAddress)
}

// TestHazardMissingSync: no PREWRITE/PREREAD/POSTREAD around transfers;
// the controller reads setup packets and OUT data still dirty in the
// cache.
func TestHazardMissingSync(t *testing.T) {
	hazard(t, wrong{noSync: true}, 4, 20, hwsim.StaleDeviceRead, hwsim.CPUWroteDeviceLine)
}

// TestHazardLengthBeforeActive: the actual length taken from a load made
// before the one that showed Active clear: the model writes garbage into
// the length field while the packet is in flight, so the driver reports
// wrong lengths.
func TestHazardLengthBeforeActive(t *testing.T) {
	hazard(t, wrong{lengthFirst: true, agentRate: 256}, 8, 100)
}

// TestHazardCompletionOrder: a completion pass that retires transfers
// across pipes in submission order (stopping at the first pipe whose
// head is still running) never reports a finished OUT transfer while an
// IN transfer submitted before it waits for data, so a request/response
// exchange deadlocks. The model finishes QHs' write-backs in its own
// order; the driver must scan every pipe.
func TestHazardCompletionOrder(t *testing.T) {
	if !hazardTag {
		t.Skip("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
	exchange := func(w wrong) error {
		r := newRig(t, 7, false, w)
		defer r.close()
		r.enumerate(t)
		in, out := r.bulk(t) // the IN pipe is scanned first
		xi, chi := newTransfer(t, in, 512)
		xi.Flags = usb.ShortOK
		if err := in.Submit(xi); err != nil {
			return err
		}
		xo, cho := newTransfer(t, out, 64)
		xo.Len = copy(xo.Buf, "request")
		if err := out.Submit(xo); err != nil {
			return err
		}
		select {
		case <-cho:
		case <-time.After(500 * time.Millisecond):
			return errors.New("the request's completion was never reported")
		}
		r.dev.queueIn([]byte("response"))
		select {
		case x := <-chi:
			if x.Err != nil || string(x.Buf[:x.Actual]) != "response" {
				return fmt.Errorf("response: %q %v", x.Buf[:x.Actual], x.Err)
			}
		case <-time.After(5 * time.Second):
			return errors.New("no response")
		}
		return nil
	}
	if err := exchange(wrong{}); err != nil {
		t.Fatalf("correct driver: %v", err)
	}
	if err := exchange(wrong{globalOrder: true}); err == nil {
		t.Fatal("a completion pass in global submission order was not caught")
	} else {
		t.Logf("caught: %v", err)
	}
}

// TestHazardReuseBeforeFrameAdvance: Cancel that reuses the TDs at once
// after unlinking, without waiting for the frame number to advance: the
// controller is still executing a TD it fetched in the current frame
// when the driver rewrites it, and the model reports it walking freed
// memory. The correct driver, doing the same, is never caught.
func TestHazardReuseBeforeFrameAdvance(t *testing.T) {
	if !hazardTag {
		t.Skip("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
	churn := func(w wrong, seed uint64) int {
		r := newRig(t, seed, seed%2 == 0, w)
		r.enumerate(t)
		_, out := r.bulk(t)
		x, ch := newTransfer(t, out, 1024)
		for i := 0; i < 200; i++ {
			x.Len = 1024
			if err := out.Submit(x); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(i%5) * 20 * time.Microsecond)
			out.Cancel(x)
			<-ch
		}
		r.close()
		n := 0
		for _, m := range r.sys.Misuses() {
			if m.Kind == hwsim.ModelRule {
				n++
			}
		}
		return n
	}
	caught := 0
	for seed := uint64(1); seed <= 4; seed++ {
		if n := churn(wrong{}, seed); n != 0 {
			t.Fatalf("seed %d: correct driver caught %d times", seed, n)
		}
		if churn(wrong{noFrameWait: true}, seed) > 0 {
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("reuse before the frame advanced was never caught")
	}
	t.Logf("caught under %d/4 seeds", caught)
}

// TestHazardShortPacketToggle: after a short packet stops a bulk queue
// (SPD), the transfers queued behind it were built with toggles that
// assumed the short transfer used all its packets; restarting them
// unchanged sends the device the wrong toggle, and it drops or the host
// discards packets: frames are lost or merged.
func TestHazardShortPacketToggle(t *testing.T) {
	hazard(t, wrong{noRetoggle: true}, 4, 20)
}

// TestHazardDeviceVanishes: a device unplugged in the middle of four
// bulk-in transfers answers nothing; with the three-strike error counter
// each transfer fails with a transaction error, retried forever they
// hang.
func TestHazardDeviceVanishes(t *testing.T) {
	if !hazardTag {
		t.Skip("the in-driver wrong-code hooks need -tags gowrt_hazard")
	}
	vanish := func(w wrong) (failed int) {
		r := newRig(t, 8, true, w)
		defer r.close()
		r.enumerate(t)
		in, _ := r.bulk(t)
		ch := make(chan *usb.Transfer, 8)
		for i := 0; i < 4; i++ {
			x, err := in.NewTransfer(2048)
			if err != nil {
				t.Fatal(err)
			}
			x.Flags = usb.ShortOK
			x.Done = func(x *usb.Transfer) { ch <- x }
			if err := in.Submit(x); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond)
		r.model.Unplug(1)
		for i := 0; i < 4; i++ {
			select {
			case x := <-ch:
				if !errors.Is(x.Err, usb.ErrTransaction) {
					t.Fatalf("after unplug: %v", x.Err)
				}
				failed++
			case <-time.After(time.Second):
				return failed
			}
		}
		return failed
	}
	if n := vanish(wrong{}); n != 4 {
		t.Fatalf("correct driver: %d of 4 transfers failed after the unplug", n)
	}
	if n := vanish(wrong{noErrLimit: true}); n != 0 {
		t.Fatalf("with TDs retried forever %d transfers still failed", n)
	}
}
