package ar71xxsim

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// runMisc raises the UART source events times on a model of chip rev,
// driven by the real MiscController built from drvInfo (which may
// deliberately be the wrong chip's), and the real intr.Dispatcher. The
// handler clears the device's cause. It returns the handler runs, the
// model's deliveries and whether the model saw a storm.
func runMisc(t *testing.T, rev uint32, drvInfo *ar71xx.Info, events int) (runs, deliveries uint64, stormed bool) {
	t.Helper()
	sys := hwsim.New(hwsim.Config{Seed: 7, BigEndianCPU: true})
	soc, err := New(sys, Config{Rev: rev})
	if err != nil {
		t.Fatal(err)
	}
	ctl := ar71xx.NewMisc(drvInfo, soc.ResetRegion)
	d := intr.NewDispatcher(ctl, soc.Reset)
	var handled atomic.Uint64
	if err := d.Register(ar71xx.MiscUART, "uart", func() {
		handled.Add(1)
		sys.Do(func() { soc.Reset.LowerMisc(ar71xx.MiscUART) })
	}); err != nil {
		t.Fatal(err)
	}
	// The deadline only bounds a broken run: a correct one ends as soon
	// as each event is handled, and a storm ends the loop at once. Under
	// qemu-mips on a loaded machine 20 deliveries took over 5 s.
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; i < events && !stormed; i++ {
		sys.Do(func() { soc.Reset.RaiseMisc(ar71xx.MiscUART) })
		for handled.Load() <= uint64(i) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Microsecond)
		}
		sys.Do(func() { stormed = soc.Reset.Stormed() != 0 })
	}
	// A storm needs no further events: give it the chance to show.
	for !stormed && time.Now().Before(deadline) && handled.Load() > uint64(events) {
		time.Sleep(time.Millisecond)
		sys.Do(func() { stormed = soc.Reset.Stormed() != 0 })
	}
	if err := d.Unregister(ar71xx.MiscUART); err != nil {
		t.Fatal(err)
	}
	sys.Do(func() {
		deliveries = soc.Reset.Deliveries[ar71xx.MiscUART]
		stormed = soc.Reset.Stormed() != 0
	})
	return handled.Load(), deliveries, stormed
}

// TestHazardMiscNotAcked: on AR934x the MISC status latches; a driver that
// treats it like AR71xx (no ack) unmasks a line whose status is still set,
// and the line fires forever with nothing to do: a livelock. The correct
// controller acks and each event is handled exactly once.
func TestHazardMiscNotAcked(t *testing.T) {
	i934, _ := ar71xx.Identify(0x2120)
	i71, _ := ar71xx.Identify(0x00A2)
	const events = 20

	runs, del, storm := runMisc(t, 0x2120, i934, events)
	if storm || runs != events || del != events {
		t.Fatalf("AR934x with ack: runs %d deliveries %d storm %v, want %d/%d/false", runs, del, storm, events, events)
	}
	runs, del, storm = runMisc(t, 0x2120, i71, events)
	if !storm || del <= events {
		t.Fatalf("hazard not reproduced: AR934x without ack: runs %d deliveries %d storm %v", runs, del, storm)
	}
}

// TestMiscAckHarmlessOnAR71xx: on AR71xx the status follows the source;
// acking (a driver configured with the AR934x method) changes nothing, and
// not acking is correct.
func TestMiscAckHarmlessOnAR71xx(t *testing.T) {
	i934, _ := ar71xx.Identify(0x2120)
	i71, _ := ar71xx.Identify(0x00A2)
	const events = 20
	for _, drv := range []*ar71xx.Info{i71, i934} {
		runs, del, storm := runMisc(t, 0x00A2, drv, events)
		if storm || runs != events || del != events {
			t.Fatalf("AR71xx model, %s driver: runs %d deliveries %d storm %v", drv.Name, runs, del, storm)
		}
	}
}
