package arge

import (
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/busdma"
)

// Transmit queues one frame made of frags (at most MaxTXFrags, at least 5
// and at most MaxFrameLen bytes in total). The buffers are used in place
// until TXDone(token) runs; fragments that break the chip's DMA rules are
// bounced (copied) by busdma. Transmit never blocks: when the ring is full
// it returns ErrRingFull, and after Stop it returns ErrStopped.
func (d *Driver) Transmit(frags [][]byte, token uint64) error {
	total := 0
	for _, f := range frags {
		total += len(f)
	}
	if total < minTXLen || total > MaxFrameLen || len(frags) > MaxTXFrags {
		d.Stats.TxRejected.Add(1)
		return fmt.Errorf("%w: %d bytes in %d fragments", ErrFrameSize, total, len(frags))
	}
	d.txMu.Lock()
	defer d.txMu.Unlock()
	if d.txStopped {
		// Checked under txMu, which Stop holds while it resets the DMA:
		// no frame can start the engine after its descriptor pointer is
		// cleared. (Not under runMu: Transmit may be called from a
		// Receive callback that runs under it.)
		return ErrStopped
	}
	// Keep two descriptors spare, as FreeBSD does, so a full ring is never
	// mistaken for an empty one.
	if d.txUsed+len(frags) > d.txN-2 {
		d.reclaimLocked()
	}
	s := &d.tx[d.txProd]
	segs, err := s.m.LoadFrags(frags, busdma.ToDevice)
	if errors.Is(err, busdma.ErrNoBounce) {
		d.reclaimLocked()
		segs, err = s.m.LoadFrags(frags, busdma.ToDevice)
	}
	if err != nil {
		if errors.Is(err, busdma.ErrNoBounce) {
			d.countFull()
			return fmt.Errorf("%w: %v", ErrRingFull, err)
		}
		d.Stats.TxRejected.Add(1)
		return err
	}
	n := len(segs)
	if d.txUsed+n > d.txN-2 {
		_ = s.m.Unload()
		d.countFull()
		return ErrRingFull
	}
	if err := s.m.Sync(busdma.PreWrite); err != nil {
		_ = s.m.Unload()
		return err
	}
	first := d.txProd
	early := d.hz.earlyFirst() // false in the shipped build
	var ctrl0 uint32
	for i, sg := range segs {
		o := d.txDesc((first + i) % d.txN)
		ctrl := uint32(sg.Len) & d.lenMask
		if i < n-1 {
			ctrl |= DescMore
		}
		d.ring.Write32(o+DescBuf, uint32(sg.Addr))
		if i == 0 && !early {
			// The first descriptor keeps the EMPTY it has had since it
			// was reclaimed (or initialised): the engine stops there.
			ctrl0 = ctrl
			continue
		}
		d.ring.Write32(o+DescCtrl, ctrl)
	}
	if !early {
		d.ring.Barrier()                                // the rest of the chain is in memory ...
		d.ring.Write32(d.txDesc(first)+DescCtrl, ctrl0) // ... before the frame is handed over
	}
	d.ring.Barrier()
	s.ndesc, s.token = n, token
	d.txProd = (first + n) % d.txN
	d.txUsed += n
	d.wr(RegTXCtrl, TXCtrlEnable) // restarts an idle engine; harmless if running
	d.r.Barrier()
	d.Stats.TxFrames.Add(1)
	d.Stats.TxBytes.Add(uint32(total))
	return nil
}

// TransmitFrame is Transmit of a single-buffer frame.
func (d *Driver) TransmitFrame(frame []byte, token uint64) error {
	one := [1][]byte{frame}
	return d.Transmit(one[:], token)
}

func (d *Driver) countFull() {
	d.Stats.TxRingFull.Add(1)
}

// Reclaim releases the buffers of every frame the hardware has finished.
func (d *Driver) Reclaim() int {
	d.txMu.Lock()
	defer d.txMu.Unlock()
	return d.reclaimLocked()
}

func (d *Driver) reclaimLocked() int {
	done := 0
	for d.txUsed > 0 {
		s := &d.tx[d.txCons]
		for i := 0; i < s.ndesc; i++ {
			if d.ring.Read32(d.txDesc((d.txCons+i)%d.txN)+DescCtrl)&DescEmpty == 0 {
				return done
			}
		}
		// One acknowledgement per descriptor: the hardware counts
		// descriptors, and under- or over-acking makes the interrupt
		// storm or lose events.
		for i := 0; i < s.ndesc; i++ {
			d.wr(RegTXStatus, TXStatusPktSent)
		}
		if s.m.Bounced != 0 {
			d.Stats.TxBounced.Add(uint32(s.m.Bounced))
			s.m.Bounced = 0
		}
		_ = s.m.Sync(busdma.PostWrite)
		_ = s.m.Unload()
		if d.cfg.TXDone != nil {
			d.cfg.TXDone(s.token)
		}
		d.txCons = (d.txCons + s.ndesc) % d.txN
		d.txUsed -= s.ndesc
		done++
	}
	if done > 0 {
		d.r.Barrier()
	}
	return done
}

// TXQueued returns the descriptors in use.
func (d *Driver) TXQueued() int {
	d.txMu.Lock()
	defer d.txMu.Unlock()
	return d.txUsed
}
