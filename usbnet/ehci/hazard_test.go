package ehci

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// hazard runs run with the driver made wrong by w over seeds and requires
// the model to catch it under some seed (a misuse of one of kinds, or
// run's own check failing: wrong data, a wrong Actual, a transfer that
// never completes), and the correct driver to be caught under none.
func hazard(t *testing.T, w wrong, seeds int, run func(testing.TB, *rig) error, kinds ...hwsim.MisuseKind) {
	t.Helper()
	hazardWith(t, nil, w, seeds, run, kinds...)
}

// hazardWith is hazard on machines that mod shapes.
func hazardWith(t *testing.T, mod func(*rigOpts), w wrong, seeds int, run func(testing.TB, *rig) error, kinds ...hwsim.MisuseKind) {
	t.Helper()
	if w.inDriver() && !hazardTag {
		t.Skip("this wrong variant needs the driver's hook: go test -tags gowrt_hazard")
	}
	caught := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		for _, bug := range []bool{true, false} {
			o := rigOpts{seed: seed, tt: seed%2 == 0, le: seed%3 == 0}
			if mod != nil {
				mod(&o)
			}
			if bug {
				o.wrong = w
			}
			r := newRig(t, o)
			// A wrong driver's hang is detected by a timeout; the correct
			// one gets time to spare for a loaded machine (qemu-mips).
			r.patience = 10 * time.Second
			if bug {
				r.patience = time.Second
			}
			err := run(t, r)
			r.close()
			ms := r.misuses()
			if !bug {
				if err != nil {
					t.Errorf("seed %d: correct driver failed: %v", seed, err)
				}
				for _, m := range ms {
					t.Errorf("seed %d: correct driver caught: %v", seed, m)
				}
				continue
			}
			why := ""
			for _, m := range ms {
				for _, k := range kinds {
					if m.Kind == k && why == "" {
						why = m.String()
					}
				}
			}
			if why == "" && err != nil {
				why = err.Error()
			}
			if why != "" {
				caught++
				t.Logf("seed %d caught: %s", seed, why)
			}
		}
	}
	if caught == 0 {
		t.Fatalf("the model caught the bug under none of %d seeds", seeds)
	}
	t.Logf("caught under %d/%d seeds", caught, seeds)
}

func mixed(tb testing.TB, r *rig) error { return workload(tb, r, 24, r.patience) }

// TestHazardTokenFirst: the first qTD's token (Active) is written before
// its buffer pointers; the engine runs it half-written.
func TestHazardTokenFirst(t *testing.T) {
	hazard(t, wrong{tokenFirst: true}, 6, mixed, hwsim.ModelRule, hwsim.BadDMAAddress)
}

// TestHazardMissingBarrier: the stores are in the right program order
// but no barrier orders them; the posted token store overtakes the
// buffer pointers. It is caught under about half the seeds, but under
// -race and load a run of 8 seeds caught it under none about once in six
// (CI, 2026-12-02): 16 seeds make that rare; why whole runs miss is not
// understood yet.
func TestHazardMissingBarrier(t *testing.T) {
	hazard(t, wrong{noBarriers: true}, 16, mixed, hwsim.ModelRule, hwsim.BadDMAAddress)
}

// TestHazardMissingSync: no cache maintenance around the transfer
// buffers: the engine reads OUT data still dirty in the CPU cache.
func TestHazardMissingSync(t *testing.T) {
	hazard(t, wrong{noSync: true}, 4, mixed, hwsim.StaleDeviceRead, hwsim.CPUWroteDeviceLine)
}

// TestHazardOverlayCompletion: a transfer judged complete because the qH
// overlay moved past it, with its qTDs' tokens not yet written back:
// wrong Actual counts, and qTDs reused under the controller's write-back.
func TestHazardOverlayCompletion(t *testing.T) {
	hazard(t, wrong{overlayDone: true}, 6, mixed, hwsim.ModelRule)
}

// TestHazardNoAsyncAdvance: a closed pipe's qH is reused for the next
// pipe at once, without the async-advance doorbell: the engine still
// holds it and finds it rewritten.
func TestHazardNoAsyncAdvance(t *testing.T) {
	hazard(t, wrong{skipAdvance: true}, 4, churn, hwsim.ModelRule)
}

// churn opens and closes bulk pipes with a transfer waiting on a NAKing
// endpoint, alternating endpoints so each reuse of a qH rewrites it.
func churn(tb testing.TB, r *rig) error {
	sp, _, err := r.enumerateErr(tb)
	if err != nil {
		return err
	}
	r.sys.Do(func() { r.dev.nakLeft = 1 << 30 })
	for i := 0; i < 150; i++ {
		ep := uint8(1)
		if i%2 == 1 {
			ep = 2 | usb.EndpointIn
		}
		p, err := r.hc.OpenPipe(usb.PipeConfig{Address: 1, Endpoint: ep, Type: usb.Bulk, MaxPacket: 512, Speed: sp})
		if err != nil {
			return err
		}
		tr, err := p.NewTransfer(512)
		if err != nil {
			return err
		}
		w := newWaiter(1)
		tr.Done = w.done
		if err := p.Submit(tr); err != nil {
			return err
		}
		time.Sleep(50 * time.Microsecond)
		p.Close()
		if got, err := w.waitErr(r.patience); err != nil || got.Err == nil {
			return fmt.Errorf("pipe %d: close did not cancel its transfer: %v", i, err)
		}
	}
	return nil
}

// TestHazardNoShortPacketAlt: IN qTDs without an alternate next pointer.
// A message that ends short in a transfer's first qTD sends the
// controller on to the transfer's second qTD, which the driver has
// already retired with the first: data lands in freed qTDs' buffers and
// messages run together.
func TestHazardNoShortPacketAlt(t *testing.T) {
	hazard(t, wrong{noAltNext: true}, 4, bigShortIn, hwsim.ModelRule)
}

// bigShortIn receives short messages into 40000-byte transfers (three
// qTDs each).
func bigShortIn(tb testing.TB, r *rig) error {
	_, in, err := r.bulkErr(tb)
	if err != nil {
		return err
	}
	var msgs [][]byte
	for i := 0; i < 12; i++ {
		msgs = append(msgs, pattern(i, 100+i*900))
	}
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, msgs...) })
	w := newWaiter(2)
	for i := 0; i < 2; i++ {
		tr, err := in.NewTransfer(40000)
		if err != nil {
			return err
		}
		tr.Done = w.done
		tr.Flags = usb.ShortOK
		if err := in.Submit(tr); err != nil {
			return err
		}
	}
	for i, m := range msgs {
		tr, err := w.waitErr(r.patience)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		if tr.Err != nil || !bytes.Equal(tr.Buf[:tr.Actual], m) {
			return fmt.Errorf("message %d: %v, %d bytes, want %d", i, tr.Err, tr.Actual, len(m))
		}
		if i+2 < len(msgs) {
			if err := in.Submit(tr); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestHazardHaltNoRestart: after a STALL the qH stays halted, so the
// transfer after CLEAR_FEATURE(ENDPOINT_HALT) never runs.
func TestHazardHaltNoRestart(t *testing.T) {
	hazard(t, wrong{noRestart: true}, 2, stallRecover)
}

// stallRecover stalls the bulk-in endpoint, clears the halt and expects
// the next message.
func stallRecover(tb testing.TB, r *rig) error {
	_, in, err := r.bulkErr(tb)
	if err != nil {
		return err
	}
	w := newWaiter(1)
	tr, err := in.NewTransfer(2048)
	if err != nil {
		return err
	}
	tr.Done = w.done
	tr.Flags = usb.ShortOK
	r.sys.Do(func() { r.dev.stalled[2] = true })
	if err := in.Submit(tr); err != nil {
		return err
	}
	if _, err := w.waitErr(r.patience); err != nil || !errors.Is(tr.Err, usb.ErrStall) {
		return fmt.Errorf("stall: %v %v", err, tr.Err)
	}
	ctl, err := r.hc.OpenPipe(usb.PipeConfig{Address: 1, Type: usb.Control, MaxPacket: 64, Speed: r.dev.speed})
	if err != nil {
		return err
	}
	if _, err := control(tb, ctl, usb.Setup{RequestType: 2, Request: 1, Index: 0x82}, nil); err != nil {
		return err
	}
	in.ResetToggle()
	msg := pattern(3, 1000)
	r.sys.Do(func() { r.dev.msgs = append(r.dev.msgs, msg) })
	if err := in.Submit(tr); err != nil {
		return err
	}
	if _, err := w.waitErr(r.patience); err != nil {
		return fmt.Errorf("after clear-halt: %w", err)
	}
	if tr.Err != nil || !bytes.Equal(tr.Buf[:tr.Actual], msg) {
		return fmt.Errorf("after clear-halt: %v, %d bytes", tr.Err, tr.Actual)
	}
	return nil
}

// TestHazardInfiniteRetries: qTDs with CERR 0 retry an unplugged device
// forever, so its transfers never complete and the pipe hangs.
func TestHazardInfiniteRetries(t *testing.T) {
	hazard(t, wrong{cerrZero: true}, 2, unplugged)
}

// unplugged queues transfers to a NAKing device, unplugs it and expects
// every transfer to fail within a second.
func unplugged(tb testing.TB, r *rig) error {
	out, _, err := r.bulkErr(tb)
	if err != nil {
		return err
	}
	w := newWaiter(3)
	r.sys.Do(func() { r.dev.nakLeft = 1 << 30 })
	for i := 0; i < 3; i++ {
		tr, err := out.NewTransfer(30000)
		if err != nil {
			return err
		}
		tr.Done = w.done
		if err := out.Submit(tr); err != nil {
			return err
		}
	}
	r.sim.Detach(1)
	for i := 0; i < 3; i++ {
		tr, err := w.waitErr(r.patience)
		if err != nil {
			return fmt.Errorf("transfer %d after unplug: %w", i, err)
		}
		if !errors.Is(tr.Err, usb.ErrTransaction) {
			return fmt.Errorf("transfer %d after unplug: %v", i, tr.Err)
		}
	}
	return nil
}

// TestHazardSynopsysIAA: on a core with the AR71xx's IAA defect (the
// engine still holds the unlinked qH it was about to visit after the
// doorbell's answer), a driver that does not rewrite ASYNCLISTADDR after
// each answer reuses a qH the engine still walks.
func TestHazardSynopsysIAA(t *testing.T) {
	ar71xx := func(o *rigOpts) { o.synopsys, o.tt = true, false }
	hazardWith(t, ar71xx, wrong{noSynopsysFix: true}, 6, churn, hwsim.ModelRule)
}

// TestHazardBabbleAsStall: a driver that does not decode the Babble bit
// reports a babbling device (more data than the qTD asked for) as a
// stalled endpoint, and its owner clears a halt that is not there.
func TestHazardBabbleAsStall(t *testing.T) {
	hazard(t, wrong{noBabble: true}, 2, babble)
}

// babble makes the device send a full packet into a 100-byte transfer.
func babble(tb testing.TB, r *rig) error {
	_, in, err := r.bulkErr(tb)
	if err != nil {
		return err
	}
	w := newWaiter(1)
	tr, err := in.NewTransfer(512)
	if err != nil {
		return err
	}
	tr.Done = w.done
	tr.Len = 100
	r.sys.Do(func() { r.dev.babble = true })
	if err := in.Submit(tr); err != nil {
		return err
	}
	if _, err := w.waitErr(r.patience); err != nil {
		return err
	}
	if !errors.Is(tr.Err, usb.ErrBabble) {
		return fmt.Errorf("babble reported as %v", tr.Err)
	}
	return nil
}
