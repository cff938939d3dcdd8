package ar9300_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gowrt/gowrt/ath/ar9300"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/wlan/radio"
)

// TestConcurrentTransmitAndInterrupt: the MAC layer transmits from its
// goroutine (retrying on ErrQueueFull) while the board's handler services
// interrupts in another, and Done retransmits from inside the handler.
// Run with -race.
func TestConcurrentTransmitAndInterrupt(t *testing.T) {
	r := newRig(t, rigOpts{seed: 91, hw: hwsim.Config{NoEviction: true}, cfg: radioCfgSmall()})
	r.keep = false
	const n = 300
	frames := make([][]byte, 8)
	for i := range frames {
		frames[i] = r.dmaFrame(qosData(peerMAC, apMAC, uint16(i), payload(200, byte(i)), false))
	}
	var completed, retried atomic.Int64
	var retry func(*radio.TxRequest, *radio.TxStatus)
	reqs := make([]*radio.TxRequest, n)
	retry = func(req *radio.TxRequest, st *radio.TxStatus) {
		if st.Err == nil && req.Cookie == nil {
			// First completion: send it once more from the handler.
			req.Cookie = true
			if r.drv.Transmit(req) == nil {
				retried.Add(1)
				return
			}
		}
		completed.Add(1)
	}
	for i := range reqs {
		reqs[i] = &radio.TxRequest{MPDUs: [][]byte{frames[i%len(frames)]}, Series: sched(1), Key: radio.NoKey,
			Queue: uint8(i % 4), Done: retry}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the interrupt handler
		defer wg.Done()
		for !stop.Load() {
			r.sys.Sched.Settle(64)
			r.drv.Interrupt()
		}
	}()
	for i := 0; i < n; {
		if err := r.drv.Transmit(reqs[i]); err == radio.ErrQueueFull {
			continue
		} else if err != nil {
			t.Error(err)
			break
		}
		i++
	}
	for completed.Load() < n && r.drv.Stats.TxStatusBad.Load() == 0 {
		r.sys.Do(func() {})
	}
	stop.Store(true)
	wg.Wait()
	if completed.Load() != n || retried.Load() == 0 {
		t.Fatalf("%d of %d completed, %d retried from Done", completed.Load(), n, retried.Load())
	}
}

func radioCfgSmall() ar9300.Config { return ar9300.Config{TxDescs: 16} }
