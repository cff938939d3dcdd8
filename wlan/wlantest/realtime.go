package wlantest

import (
	"sync"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/wlan/medium"
)

// RunRealtime advances m's clock with the wall clock, one step at a time,
// delivering frames and ticking every device, until the returned stop is
// called (stop waits for the last step). Frames other goroutines transmit
// in between go on the air at the next step.
func RunRealtime(m *medium.Medium, step time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(step)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				m.Run(step)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

// Cable connects two NICs back to back, like a patch cable: what one
// receives the other transmits (copied, so either may lend its receive
// buffer). Both are started; stop them with Stop.
func Cable(a, b gnet.NIC) error {
	if err := a.Start(&cableEnd{to: b}); err != nil {
		return err
	}
	if err := b.Start(&cableEnd{to: a}); err != nil {
		a.Stop()
		return err
	}
	return nil
}

type cableEnd struct{ to gnet.NIC }

func (c *cableEnd) Receive(frame []byte) {
	f := flatFrame(append([]byte(nil), frame...))
	_ = c.to.Transmit(f) // a full or down port drops the frame, as a cable would
}

func (c *cableEnd) LinkChanged(gnet.LinkState) {}

type flatFrame []byte

func (f flatFrame) Segments() [][]byte { return [][]byte{f} }
func (f flatFrame) Len() int           { return len(f) }
func (f flatFrame) Release()           {}

// TickOnly is a medium.Device that only passes the medium's clock to a
// MAC layer whose frames go through a medium.SimRadio (which delivers
// them itself): attach it with Medium.Attach.
type TickOnly struct{ T Ticker }

// Receive implements medium.Device: the SimRadio delivers the frames.
func (TickOnly) Receive([]byte) {}

// Tick implements medium.Device.
func (d TickOnly) Tick(now time.Time) { d.T.Tick(now) }
