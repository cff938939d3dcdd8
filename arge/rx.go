package arge

import "github.com/gowrt/gowrt/busdma"

// validRX checks a completed RX descriptor's control word: no flag but
// the cleared EMPTY, no bits outside the length field, a length that
// holds at least an Ethernet header plus FCS and fits the buffer.
func (d *Driver) validRX(ctrl uint32) (int, bool) {
	if ctrl&^d.lenMask != 0 {
		return 0, false
	}
	n := ctrl & d.lenMask
	if n < ethHdrLen+fcsLen || n > d.rxLen {
		return 0, false
	}
	return int(n) - fcsLen, true
}

// rxPass receives at most budget frames and reports how many descriptors
// it consumed and whether more may be waiting.
func (d *Driver) rxPass(budget int, pending bool) (int, bool) {
	d.rxMu.Lock()
	defer d.rxMu.Unlock()
	// Never scan further than once around the ring: every descriptor
	// of a full ring is complete, and a wider scan would count them twice.
	budget = min(budget, len(d.rxScratch), d.rxN)
	k := d.scanRX(budget)
	if k == 0 && pending {
		// The status says frames arrived but no descriptor shows it
		// yet: the descriptor write-backs may still sit in the DDR
		// write buffer.
		_ = d.flush()
		k = d.scanRX(budget)
	}
	if k == 0 {
		return 0, false
	}
	// Drain the DDR write buffer after seeing the descriptors complete and
	// before reading their data: the write-backs may have overtaken the
	// data. A flush before the scan (FreeBSD) would not cover frames that
	// completed during the scan.
	_ = d.flush()
	var good, bytes, bad uint64
	for i := 0; i < k; i++ {
		idx := (d.rxCons + i) % d.rxN
		m := d.rxMap[idx]
		if n, ok := d.validRX(d.rxScratch[i]); ok {
			_ = m.Sync(busdma.PostRead)
			if d.cfg.Receive != nil {
				d.cfg.Receive(d.rxBuf[idx][d.rxOff : d.rxOff+n : d.rxOff+n])
			}
			good++
			bytes += uint64(n)
		} else {
			bad++
		}
		// Give the buffer back: invalidate first so no line of it can be
		// written back over the next frame, then hand over the descriptor.
		_ = m.Sync(busdma.PreRead)
		d.ring.Write32(d.rxDesc(idx)+DescCtrl, DescEmpty|d.rxLen)
		d.wr(RegRXStatus, RXStatusPktRecvd)
	}
	d.ring.Barrier()
	d.rxCons = (d.rxCons + k) % d.rxN
	d.Stats.RxFrames.Add(uint32(good))
	d.Stats.RxBytes.Add(uint32(bytes)) // one pass: at most a ring of frames
	if bad != 0 {
		d.Stats.RxBad.Add(uint32(bad))
	}
	return k, k == budget
}

func (d *Driver) scanRX(budget int) int {
	k := 0
	for k < budget {
		ctrl := d.ring.Read32(d.rxDesc((d.rxCons+k)%d.rxN) + DescCtrl)
		if ctrl&DescEmpty != 0 {
			break
		}
		d.rxScratch[k] = ctrl
		k++
	}
	return k
}

// RXBufferLen is the length every RX descriptor offers the MAC: the
// longest frame, FCS included, the driver can take from a descriptor.
func (d *Driver) RXBufferLen() int { return int(d.rxLen) }
