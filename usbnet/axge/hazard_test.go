package axge

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
)

// The pre-fix FreeBSD variants, made from outside the driver where a
// wrapper of what it is given can make them (the unlocked MII passes
// need the driver's hook: hazard_on.go).

// noQCtrl is a driver that never programs RX_BULKIN_QCTRL: the chip keeps
// its power-on entry (timer 0x004f, meant for gigabit on USB 3).
type noQCtrl struct{ ControlDevice }

func (w noQCtrl) Control(s usb.Setup, data []byte, timeout time.Duration) (int, error) {
	if !s.In() && s.Request == ReqAccessMAC && s.Value == RegBulkInQCtl {
		return len(data), nil
	}
	return w.ControlDevice.Control(s, data, timeout)
}

// garbageOnError is FreeBSD's pre-fix control read: the request fails,
// the caller is told nothing, and the buffer holds whatever it held.
type garbageOnError struct {
	ControlDevice
	rng *rand.Rand
}

func (w garbageOnError) Control(s usb.Setup, data []byte, timeout time.Duration) (int, error) {
	n, err := w.ControlDevice.Control(s, data, timeout)
	if err != nil && s.In() {
		for i := range data {
			data[i] = byte(w.rng.Uint32())
		}
		return len(data), nil
	}
	return n, err
}

// noPad is a framing without the TX padding fix: the PAD flag and its
// byte are taken off again, so a frame whose length + 8 is a multiple of
// the max packet size goes out as whole packets with nothing to end it.
type noPad struct{ *Framing }

func (w noPad) EncodeTx(dst []byte, segs [][]byte, n, maxPacket int) (int, usb.Flags, error) {
	l, fl, err := w.Framing.EncodeTx(dst, segs, n, maxPacket)
	if err == nil && binary.LittleEndian.Uint32(dst[4:]) == txPadding {
		binary.LittleEndian.PutUint32(dst[4:], 0)
		l--
	}
	return l, fl, err
}

var up1000 = axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true, Pause: true}

// TestHazardTxPadding: with the PAD flag, frames of every length flow;
// without it, the first frame with (len + 8) % 512 == 0 leaves the chip
// waiting for the rest of its transfer, the next transfer is NAKed for
// ever, the TX queue fills and Transmit says ErrTxFull from then on.
func TestHazardTxPadding(t *testing.T) {
	run := func(f usbnet.Framing) (sent int, stuck bool, st axgesim.Stats, txFull uint64) {
		r := newRig(t, axgesim.Config{Link: up1000}, AX88179, nil)
		r.init(t)
		it := r.dev.Configs[0].Interfaces[0]
		in, _ := it.Endpoint(usb.Bulk, true)
		out, _ := it.Endpoint(usb.Bulk, false)
		inP, err := r.dev.OpenPipe(in)
		if err != nil {
			t.Fatal(err)
		}
		outP, err := r.dev.OpenPipe(out)
		if err != nil {
			t.Fatal(err)
		}
		nic, err := usbnet.New(usbnet.Config{Name: "axge-hazard", In: inP, Out: outP, Framing: f,
			MAC: r.chip.MAC(), RxSize: RxSize, Link: gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer nic.Stop()
		if err := nic.Start(&collector{}); err != nil {
			t.Fatal(err)
		}
		var released atomic.Int64
		for i := 0; i < 200; i++ {
			n := 60 + i%3*400 // 60, 460, 860
			if i == 50 {
				n = 504 // 504 + 8 = 512
			}
			deadline := time.Now().Add(300 * time.Millisecond)
			for {
				err := nic.Transmit(frameBuf{testFrame(n, uint32(i)), &released})
				if err == nil {
					sent++
					break
				}
				if !errors.Is(err, gnet.ErrTxFull) {
					t.Fatal(err)
				}
				if time.Now().After(deadline) {
					return sent, true, r.model.Stats(), nic.Stats.TxFull.Load()
				}
				time.Sleep(200 * time.Microsecond)
			}
		}
		waitFor(t, "frames at the chip", func() bool { return r.model.Stats().TxFrames == uint64(sent) })
		return sent, false, r.model.Stats(), nic.Stats.TxFull.Load()
	}
	sent, stuck, st, _ := run(&Framing{})
	if stuck || sent != 200 || st.TxWedges != 0 || st.TxPadded != 1 {
		t.Fatalf("driver: %d sent, stuck %v, %d wedges, %d padded", sent, stuck, st.TxWedges, st.TxPadded)
	}
	sent, stuck, st, full := run(noPad{&Framing{}})
	if !stuck || st.TxWedges == 0 || st.TxFrames > 51 {
		t.Fatalf("no-PAD variant not caught: %d sent, stuck %v, %d wedges, %d at the chip", sent, stuck, st.TxWedges, st.TxFrames)
	}
	t.Logf("without PAD: TX wedged after %d frames (%d reached the chip), ErrTxFull %d times; with PAD: 200 of 200", sent, st.TxFrames, full)
}

// TestHazardControlReadError: control reads fail now and then (20% of
// them, with the link steady at 1000). The driver keeps the link it had;
// FreeBSD's pre-fix reads used the buffer anyway and flapped the link.
func TestHazardControlReadError(t *testing.T) {
	const ticks = 1500
	run := func(wrap func(ControlDevice) ControlDevice) (changes uint64, st axgesim.Stats) {
		r := newRig(t, axgesim.Config{Link: up1000, Seed: 7}, AX88179, wrap)
		r.init(t)
		r.model.FailControl(0.2, true)
		for i := 0; i < ticks; i++ {
			_ = r.chip.Tick()
		}
		return r.chip.Stats.LinkChanges.Load() - 1, r.model.Stats() // minus Init's
	}
	changes, st := run(nil)
	if changes != 0 || st.Flaps != 0 || st.MSRMismatch != 0 || st.ControlFails < ticks/10 {
		t.Fatalf("driver: %d link changes, %d flaps, %d MSR mismatches (%d failed reads)", changes, st.Flaps, st.MSRMismatch, st.ControlFails)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	wc, wst := run(func(d ControlDevice) ControlDevice { return garbageOnError{d, rng} })
	if wc < 20 || wst.Flaps < 10 {
		t.Fatalf("garbage-read variant not caught: %d link changes, %d flaps", wc, wst.Flaps)
	}
	t.Logf("%d ticks, %d/%d failed reads: driver 0 link changes, 0 flaps; garbage reads: %d link changes, %d flaps, %d wrong MSR words",
		ticks, st.ControlFails, wst.ControlFails, wc, wst.Flaps, wst.MSRMismatch)
}

// TestHazardMIITear runs the three MII passes concurrently for a long
// while over slow control transfers (300 µs each) while the PHY
// renegotiates between 1000 and 100 every 7 ms. With the passes
// excluding each other no media word is torn and the link changes only
// when the PHY does; without, passes see each other's half-built word.
func TestHazardMIITear(t *testing.T) {
	if !hazardTag {
		t.Skip("the unlocked-MII variant needs the driver's hook: go test -tags gowrt_hazard")
	}
	type result struct {
		modelTorn, driverTorn, changes, phyChanges, mismatch, downs uint64
	}
	run := func(unlocked bool) result {
		r := newRig(t, axgesim.Config{Link: up1000, Seed: 3}, AX88179, nil)
		r.init(t)
		if unlocked {
			setUnlocked(t, r.chip)
		}
		r.model.SlowControl(300 * time.Microsecond)
		base := r.chip.Stats.LinkChanges.Load()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		loop := func(every time.Duration, f func()) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					f()
					time.Sleep(every)
				}
			}()
		}
		speeds := []int{100, 1000}
		i := 0
		loop(7*time.Millisecond, func() {
			r.model.SetLink(axgesim.Media{Up: true, SpeedMbps: speeds[i%2], FullDuplex: true, Pause: true})
			i++
		})
		loop(time.Millisecond, func() { _ = r.chip.Tick() })
		loop(4*time.Millisecond, func() { _ = r.chip.MediaChange() })
		loop(5*time.Millisecond, func() { _ = r.chip.StatChange() })
		time.Sleep(1500 * time.Millisecond)
		close(stop)
		wg.Wait()
		// Let one pass settle the final state.
		r.model.SlowControl(0)
		_ = r.chip.Tick()
		st := r.model.Stats()
		// The PHY never lost the link: every "down" reported is a pass
		// that saw another's half-built media word.
		var downs uint64
		for len(r.links) > 0 {
			if l := <-r.links; !l.Up {
				downs++
			}
		}
		return result{st.TornMedia, r.chip.Stats.TornMedia.Load(), r.chip.Stats.LinkChanges.Load() - base, st.PHYChanges, st.MSRMismatch, downs}
	}
	good := run(false)
	if good.modelTorn != 0 || good.driverTorn != 0 || good.downs != 0 || good.changes > good.phyChanges {
		t.Fatalf("driver: %d torn words (driver saw %d), %d spurious link-downs, %d link changes for %d PHY changes",
			good.modelTorn, good.driverTorn, good.downs, good.changes, good.phyChanges)
	}
	bad := run(true)
	if bad.modelTorn < 10 || bad.downs < 3 {
		t.Fatalf("unlocked variant not caught: %d torn words, %d spurious link-downs", bad.modelTorn, bad.downs)
	}
	t.Logf("1.5 s, %d/%d PHY changes: exclusive passes: 0 torn words, 0 spurious link-downs, %d link changes; interleaved: %d torn words (driver counted %d), %d spurious link-downs, %d link changes, %d MSR words wrong for the PHY",
		good.phyChanges, bad.phyChanges, good.changes, bad.modelTorn, bad.driverTorn, bad.downs, bad.changes, bad.mismatch)
}
