package arge

import "runtime"

// Service runs one pass over both rings and the error conditions, with at
// most budget received frames (0: the configured Budget). It reports
// whether work may remain.
func (d *Driver) Service(budget int) bool {
	d.runMu.RLock()
	defer d.runMu.RUnlock()
	if !d.running {
		return false
	}
	return d.service(budget)
}

func (d *Driver) service(budget int) bool {
	if budget <= 0 {
		budget = d.budget
	}
	d.r.Barrier()
	st := d.r.Read32(RegIntStatus)
	d.Stats.Passes.Add(1)
	if st&(IntTXUnderrun|IntTXBusError|IntRXOverflow|IntRXBusError) != 0 {
		if st&IntTXUnderrun != 0 {
			d.Stats.TxUnderruns.Add(1)
		}
		if st&IntTXBusError != 0 {
			d.Stats.TxBusErrors.Add(1)
		}
		if st&IntRXOverflow != 0 {
			d.Stats.RxOverflows.Add(1)
		}
		if st&IntRXBusError != 0 {
			d.Stats.RxBusErrors.Add(1)
		}
	}

	_, more := d.rxPass(budget, st&IntRXPktRecvd != 0)
	if st&(IntRXOverflow|IntRXBusError) != 0 {
		// The receiver stopped at a descriptor it could not use; the pass
		// above gave buffers back, so clear the condition and restart it
		// where it stopped.
		var clr uint32
		if st&IntRXOverflow != 0 {
			clr |= RXStatusOverflow
		}
		if st&IntRXBusError != 0 {
			clr |= RXStatusBusError
		}
		d.wr(RegRXStatus, clr)
		d.wr(RegRXCtrl, RXCtrlEnable)
		d.r.Barrier()
	}

	d.txMu.Lock()
	d.reclaimLocked()
	if st&(IntTXUnderrun|IntTXBusError) != 0 {
		var clr uint32
		if st&IntTXUnderrun != 0 {
			clr |= TXStatusUnderrun
		}
		if st&IntTXBusError != 0 {
			clr |= TXStatusBusError
		}
		d.wr(RegTXStatus, clr)
		if d.txUsed > 0 {
			d.wr(RegTXCtrl, TXCtrlEnable)
		}
		d.r.Barrier()
	}
	d.txMu.Unlock()
	return more
}

// Interrupt is the MAC's interrupt handler (an intr.Handler): it masks the
// MAC's sources, services the rings a budget at a time until a pass comes
// up short, then unmasks.
func (d *Driver) Interrupt() {
	d.runMu.RLock()
	defer d.runMu.RUnlock()
	if !d.running {
		return // stopped: sources stay masked
	}
	d.wr(RegIntEnable, 0)
	d.r.Barrier()
	d.Stats.Interrupts.Add(1)
	for d.service(d.budget) {
		runtime.Gosched()
	}
	d.wr(RegIntEnable, IntAll)
	d.r.Barrier()
}
