package ar9300_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gowrt/gowrt/ath/ar9300"
	"github.com/gowrt/gowrt/ath/ar9300/ar9300sim"
	"github.com/gowrt/gowrt/ath/power"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/internal/wrongcode"
	"github.com/gowrt/gowrt/wlan/radio"
)

// wrongs are the in-driver mistakes (-tags gowrt_hazard only).
type wrongs struct {
	statusBeforeDone, reclaimOnStatus, resetOnOverrun, keepStaleBeacon bool
}

// seeds is how many seeded interleavings a hazard explores (fewer under
// qemu-mips, where every simulated access costs much more).
func seeds() int {
	if testing.Short() {
		return 50
	}
	if runtime.GOARCH == "mips" || runtime.GOARCH == "mipsle" {
		return 100
	}
	return 400
}

// checkWrong runs the scenario with the correct driver (it must pass) and
// with the wrong code (it must fail), when the wrong code is built in.
func checkWrong(t *testing.T, run func(wrongs) error, w wrongs) {
	t.Helper()
	if err := run(wrongs{}); err != nil {
		t.Fatalf("correct driver: %v", err)
	}
	if !hazardTag {
		t.Log("wrong-code variant needs -tags gowrt_hazard (scripts/test.sh runs it)")
		return
	}
	if err := run(w); err == nil {
		t.Fatal("the wrong driver code was not caught")
	} else {
		t.Logf("wrong driver code caught: %v", err)
	}
}

// lazyPower is a force-awake that stops working once armed: the paths
// that run after Start touch registers without waking the chip.
type lazyPower struct {
	p     *power.Chip
	armed bool
}

func (l *lazyPower) Hold() error {
	if l.armed {
		return nil
	}
	return l.p.Hold()
}

func (l *lazyPower) Release() error {
	if l.armed {
		return nil
	}
	return l.p.Release()
}

// traffic sends n PPDUs and receives n frames, and checks everything
// arrived intact and was acknowledged.
func traffic(r *rig, n int, pump func(), batch bool) error {
	var dn done
	var sent [][]byte
	r.mac.SetPaused(batch)
	for i := 0; i < n; i++ {
		f := r.dmaFrame(qosData(peerMAC, apMAC, uint16(i), payload(80+i, byte(i)), false))
		if err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(2), Key: radio.NoKey, Done: dn.fn}); err != nil {
			return err
		}
		in := qosData(apMAC, peerMAC, uint16(i), payload(60+i, byte(100+i)), false)
		in[1] = 0x01
		sent = append(sent, in)
		r.mac.Receive(in)
		if !batch {
			pump()
		}
	}
	r.mac.SetPaused(false)
	for i := 0; i < 400 && (dn.n < n || r.rxN < n); i++ {
		pump()
	}
	if dn.n != n || r.rxN != n {
		return fmt.Errorf("%d of %d transmissions completed, %d of %d frames received", dn.n, n, r.rxN, n)
	}
	for i, st := range dn.st {
		if !st.Acked || st.Err != nil {
			return fmt.Errorf("transmission %d: %+v", i, st)
		}
	}
	for i, g := range r.got {
		if !bytes.Equal(g.frame, sent[i]) {
			return fmt.Errorf("frame %d received as %x", i, g.frame)
		}
	}
	if s := r.mac.Stats(); s.AsleepAccesses != 0 {
		return fmt.Errorf("%d register accesses while the chip slept", s.AsleepAccesses)
	}
	if b, s := r.drv.Stats.TxStatusBad.Load(), r.drv.Stats.RxStatusBad.Load(); b+s != 0 {
		return fmt.Errorf("%d TX and %d RX statuses taken as malformed", b, s)
	}
	return nil
}

// TestHazardAsleepRegisterRead: a path that touches the MAC without
// holding the chip awake reads 0xdeadbeef (its writes are dropped): the
// interrupt is never understood and nothing completes. Ours holds the
// force-awake around every path.
func TestHazardAsleepRegisterRead(t *testing.T) {
	run := func(lazy bool) error {
		var lp *lazyPower
		r := newRig(t, rigOpts{seed: 11, noMisuse: true, power: func(p *power.Chip) ar9300.Power {
			lp = &lazyPower{p: p}
			return lp
		}})
		lp.armed = lazy
		if lazy {
			if err := r.pw.Release(); err == nil { // nothing holds it; keep the count honest
				return errors.New("unexpected hold")
			}
		}
		return traffic(r, 4, r.settle, false)
	}
	if err := run(false); err != nil {
		t.Fatalf("correct driver: %v", err)
	}
	if err := run(true); err == nil {
		t.Fatal("a driver touching the sleeping chip was not caught")
	} else {
		t.Logf("caught: %v", err)
	}
}

// TestHazardStatusReadBeforeDone: the chip writes a status's words in one
// engine step and its done word in a later one. A driver that reads the
// fields before it has seen the done bit sometimes takes the stale (zero)
// words of an entry that completes between its reads: a TX status it
// cannot match, an RX status it cannot parse, a frame lost. Ours reads the
// done word first, every seed.
func TestHazardStatusReadBeforeDone(t *testing.T) {
	run := func(w wrongs) error {
		return hwsim.Explore(1, seeds(), func(seed uint64) error {
			r := newRig(t, rigOpts{seed: seed, noMisuse: true, hw: hwsim.Config{AgentRate: 32},
				wrongHook: func(d *ar9300.Driver) { setWrong(d, w) }})
			pump := func() { r.drv.Interrupt() } // the engines run at the driver's accesses only, slower than it
			if err := traffic(r, 6, pump, true); err != nil {
				return err
			}
			if len(r.misuse) > 0 {
				return fmt.Errorf("%v", r.misuse[0])
			}
			return nil
		})
	}
	checkWrong(t, run, wrongs{statusBeforeDone: true})
}

// TestHazardTxStatusBeforePop: the chip writes a PPDU's status before its
// QCU has popped the chain (and re-read its last descriptor). A driver
// that recycles descriptors on the status alone rewrites one the QCU
// still holds; the model reports it. Ours holds a completed chain's
// descriptors until the queue's next completion.
func TestHazardTxStatusBeforePop(t *testing.T) {
	run := func(w wrongs) error {
		return hwsim.Explore(1, seeds()/4, func(seed uint64) error {
			r := newRig(t, rigOpts{seed: seed, noMisuse: true, cfg: ar9300.Config{TxDescs: 3},
				sim:       ar9300sim.Config{PopDelay: 30},
				wrongHook: func(d *ar9300.Driver) { setWrong(d, w) }})
			var dn done
			sent := 0
			for i := 0; i < 4000 && dn.n < 40; i++ {
				if sent < 40 {
					f := r.dmaFrame(qosData(peerMAC, apMAC, uint16(sent), payload(64, byte(sent)), false))
					err := r.drv.Transmit(&radio.TxRequest{MPDUs: [][]byte{f}, Series: sched(1), Key: radio.NoKey, Done: dn.fn})
					if err == nil {
						sent++
					} else if err != radio.ErrQueueFull {
						return err
					}
				}
				r.drv.Interrupt()
			}
			if len(r.misuse) > 0 {
				return fmt.Errorf("%v", r.misuse[0])
			}
			if dn.n != 40 {
				return fmt.Errorf("%d of 40 completed", dn.n)
			}
			return nil
		})
	}
	checkWrong(t, run, wrongs{reclaimOnStatus: true})
}

// TestHazardRxOverflow: frames arrive while the driver is not servicing:
// the buffers fill (RXEOL), the PCU FIFO fills, the rest overrun (RXORN)
// and are lost, counted. When the driver catches up it must deliver every
// frame that made it into a buffer or the FIFO, in order, and count the
// overrun; "recovering" by resetting the receive path loses the filled
// buffers.
func TestHazardRxOverflow(t *testing.T) {
	run := func(w wrongs) error {
		r := newRig(t, rigOpts{seed: 21, noMisuse: true, cfg: ar9300.Config{RxBufs: 8, RxHPBufs: 1},
			wrongHook: func(d *ar9300.Driver) { setWrong(d, w) }})
		var sent [][]byte
		for i := 0; i < 40; i++ {
			in := qosData(apMAC, peerMAC, uint16(i), payload(90, byte(i)), false)
			in[1] = 0x01
			sent = append(sent, in)
			r.mac.Receive(in)
			r.sys.Sched.Settle(64) // the chip works; the driver does not
		}
		for i := 0; i < 20; i++ {
			r.settle()
		}
		lost := r.mac.Stats().RxOverruns
		if lost == 0 || r.drv.Stats.RxOverrun.Load() == 0 {
			return fmt.Errorf("no overrun (model %d, driver %d)", lost, r.drv.Stats.RxOverrun.Load())
		}
		if uint64(r.rxN)+lost != 40 {
			return fmt.Errorf("received %d + overrun %d != 40 sent", r.rxN, lost)
		}
		for i, g := range r.got {
			if !bytes.Equal(g.frame, sent[i]) {
				return fmt.Errorf("frame %d out of order or corrupt", i)
			}
		}
		// And reception goes on.
		r.mac.Receive(sent[0])
		r.settle()
		if uint64(r.rxN)+lost != 41 {
			return errors.New("no reception after the overflow")
		}
		return nil
	}
	checkWrong(t, run, wrongs{resetOnOverrun: true})
}

// TestHazardMissedSWBA: one SWBA is serviced only after its DBA, so that
// TBTT passes without a beacon (the chip counts it) and the late beacon
// waits in the queue. Meanwhile the AP changes the beacon (a new TIM).
// The driver must count the miss and must not let the stale beacon go
// out at the next TBTT. ath9k-like code that leaves a busy beacon queue
// alone sends the old TIM.
func TestHazardMissedSWBA(t *testing.T) {
	run := func(w wrongs) error {
		r := newRig(t, rigOpts{seed: 31, noMisuse: true, wrongHook: func(d *ar9300.Driver) { setWrong(d, w) }})
		type bcn struct {
			tim byte
			tsf uint64
		}
		var got []bcn
		r.mac.OnBeacon = func(f []byte, tsf uint64) { got = append(got, bcn{f[len(f)-1], tsf}) }
		if err := r.drv.SetBeacon(beaconFrame(1), 100); err != nil {
			return err
		}
		const per = 102400 // µs
		// TBTT 3 is at 307.2 ms: its SWBA at 301.056 ms, DBA at 306.176.
		// Hold the interrupt from 300 to 307 ms.
		late := func(now time.Time) bool {
			ms := now.Sub(epoch).Milliseconds()
			return ms < 300 || ms >= 307
		}
		r.advance(310*time.Millisecond, late)
		if err := r.drv.SetBeacon(beaconFrame(2), 100); err != nil {
			return err
		}
		r.advance(300*time.Millisecond, nil)
		if r.mac.Stats().MissedBeacons != 1 {
			return fmt.Errorf("model missed %d beacons, want 1", r.mac.Stats().MissedBeacons)
		}
		if r.drv.Stats.BeaconMissed.Load() != 1 {
			return fmt.Errorf("driver counted %d missed beacons, want 1", r.drv.Stats.BeaconMissed.Load())
		}
		for _, b := range got {
			if b.tsf == 3*per {
				return errors.New("a beacon went out at the missed TBTT")
			}
			if b.tsf > 310000 && b.tim != 2 {
				return fmt.Errorf("beacon at TSF %d carries the stale TIM %d", b.tsf, b.tim)
			}
		}
		if len(got) != 4 {
			return fmt.Errorf("%d beacons in 610 ms, want 4 (five TBTTs, one missed)", len(got))
		}
		return nil
	}
	checkWrong(t, run, wrongs{keepStaleBeacon: true})
}

// TestHazardCacheMaintenance: descriptors and frames are in cached
// memory. A driver that skips the writeback before the chip reads
// (PREWRITE) lets it read stale descriptors and data; one that skips the
// invalidate before it reads what the chip wrote (PREREAD/POSTREAD) never
// sees a receive status complete. Ours syncs both ways.
func TestHazardCacheMaintenance(t *testing.T) {
	run := func(skip busdma.CacheOp) error {
		r := newRig(t, rigOpts{seed: 81, noMisuse: true, plat: func(p busdma.Platform) busdma.Platform {
			if skip == 0 {
				return p
			}
			return &wrongcode.Platform{Platform: p, SkipCache: skip}
		}})
		if err := traffic(r, 4, r.settle, false); err != nil {
			return err
		}
		if len(r.misuse) > 0 {
			return fmt.Errorf("%v", r.misuse[0])
		}
		return nil
	}
	if err := run(0); err != nil {
		t.Fatalf("correct driver: %v", err)
	}
	for _, skip := range []busdma.CacheOp{busdma.Writeback, busdma.Invalidate} {
		if err := run(skip); err == nil {
			t.Fatalf("skipping cache op %d was not caught", skip)
		} else {
			t.Logf("skipping cache op %d caught: %v", skip, err)
		}
	}
}
