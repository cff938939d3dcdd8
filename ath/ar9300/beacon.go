package ar9300

import (
	"fmt"
	"sync"

	"github.com/gowrt/gowrt/busdma"
)

// beacon is the current beacon and the two DMA buffers it is copied into
// at SWBA, alternately, so the driver never rewrites a buffer the chip
// may be reading.
type beacon struct {
	mu       sync.Mutex
	frame    []byte // current beacon (capacity maxBeacon)
	interval uint16 // TU; 0: off
	bufs     [2][]byte
	maps     [2]*busdma.Map
	bus      [2]uint32
	next     int
	queued   bool // a beacon sits in the beacon QCU
}

func (d *Driver) allocBeacon() error {
	tag, err := busdma.NewTag(d.cfg.DMA, busdma.TagConfig{Name: d.cfg.Name + "-beacon",
		Alignment: d.cfg.DMA.LineSize(), MaxSize: maxBeacon, BounceBuffers: 1})
	if err != nil {
		return err
	}
	b := &d.bcn
	b.frame = make([]byte, 0, maxBeacon)
	for i := range b.bufs {
		if b.bufs[i], err = tag.Alloc(maxBeacon); err != nil {
			return err
		}
		if b.maps[i], err = tag.NewMap(); err != nil {
			return err
		}
		segs, err := b.maps[i].Load(b.bufs[i], busdma.ToDevice)
		if err != nil {
			return err
		}
		b.bus[i] = uint32(segs[0].Addr)
	}
	return nil
}

// SetBeacon implements radio.Radio. A new interval reprograms the beacon
// timers (ath9k_hw_beaconinit for an AP: next TBTT, DBA 1 TU and SWBA 6 TU
// before it, periods in µs); the frame itself is taken at the next SWBA.
func (d *Driver) SetBeacon(frame []byte, intervalTU uint16) error {
	if intervalTU != 0 && (len(frame) < 36 || len(frame)+fcsLen > maxBeacon) {
		return fmt.Errorf("%w: beacon of %d bytes", ErrRequest, len(frame))
	}
	if intervalTU != 0 && intervalTU <= swBeaconRespT {
		return fmt.Errorf("%w: beacon interval %d TU", ErrRequest, intervalTU)
	}
	b := &d.bcn
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frame = append(b.frame[:0], frame...)
	if intervalTU == b.interval {
		return nil
	}
	if err := d.hold(); err != nil {
		return err
	}
	defer d.release()
	b.interval = intervalTU
	w := d.r.Write32
	if intervalTU == 0 {
		w(regTimerMode, d.r.Read32(regTimerMode)&^(timerTBTT|timerDBA|timerSWBA))
		d.r.Barrier()
		return nil
	}
	per := uint64(intervalTU) * tuMicros
	tsf := d.tsfLocked()
	next := (tsf/per + 1) * per
	if next-tsf < swBeaconRespT*tuMicros+tuMicros {
		next += per
	}
	w(regTimerMode, d.r.Read32(regTimerMode)&^(timerTBTT|timerDBA|timerSWBA))
	w(regNextTBTT, uint32(next))
	w(regNextDBA, uint32(next-dmaBeaconRespT*tuMicros))
	w(regNextSWBA, uint32(next-swBeaconRespT*tuMicros))
	w(regBeaconPer, uint32(per))
	w(regDBAPer, uint32(per))
	w(regSWBAPer, uint32(per))
	w(regTimerMode, d.r.Read32(regTimerMode)|timerTBTT|timerDBA|timerSWBA)
	d.r.Barrier()
	return nil
}

// tsfLocked reads the TSF with the chip already held.
func (d *Driver) tsfLocked() uint64 {
	hi := d.r.Read32(regTSFU32)
	lo := d.r.Read32(regTSFL32)
	if h2 := d.r.Read32(regTSFU32); h2 != hi {
		hi, lo = h2, d.r.Read32(regTSFL32)
	}
	return uint64(hi)<<32 | uint64(lo)
}

// beaconPending reports whether the beacon QCU still holds a frame
// (ath9k_hw_numtxpending: AR_QSTS pending count, or AR_Q_TXE still set).
func (d *Driver) beaconPending() bool {
	if d.r.Read32(regQSTS0+4*beaconQCU)&qstsPendMask != 0 {
		return true
	}
	return d.r.Read32(regQTXE)&(1<<beaconQCU) != 0
}

// swba queues the current beacon for the coming TBTT. svcMu held, chip
// awake.
func (d *Driver) swba() {
	b := &d.bcn
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.interval == 0 || len(b.frame) == 0 {
		return
	}
	if d.beaconPending() {
		// The last beacon is still queued: its SWBA was serviced after
		// its DBA, so that TBTT passed without it. Count it, and drop
		// it rather than send a beacon whose TIM is a period old.
		d.Stats.BeaconMissed.Add(1)
		if d.hz.keepStaleBeacon() {
			return
		}
		d.r.Write32(regQTXD, 1<<beaconQCU)
		d.r.Barrier()
		for i := 0; i < stopPolls && d.beaconPending(); i++ {
			d.cfg.Delay(0)
		}
		d.r.Write32(regQTXD, 0)
		d.r.Barrier()
	}
	i := b.next
	b.next ^= 1
	n := copy(b.bufs[i], b.frame)
	if b.maps[i].SyncRange(busdma.PreWrite, 0, n) != nil {
		return
	}
	slot := numAC*d.cfg.TxDescs + i
	ds := d.desc(slot)
	clear(ds)
	put32(ds, 0, vendorID<<infoDescIDSh|infoTxRxDesc|infoCtrlStat|beaconQCU<<infoQCUShift|txDescWords)
	put32(ds, 2, b.bus[i])
	put32(ds, 3, uint32(n)<<bufLenShift)
	put32(ds, 10, ptrChecksum(ds))
	put32(ds, 11, uint32(n+fcsLen)|ctl11ClrDest)
	put32(ds, 12, ctl12NoAck|frameTypeBcn<<ctl12TypeSh)
	code := uint32(0x1b) // 1 Mb/s on 2.4 GHz
	if d.channel.Load() > 14 {
		code = 0x0b // 6 Mb/s on 5 GHz
	}
	put32(ds, 13, 1<<ctl13TriesSh)
	put32(ds, 14, code)
	put32(ds, 19, ctl19NotSound)
	if d.descMap.SyncRange(busdma.PreWrite, slot*txDescSize, txDescSize) != nil {
		return
	}
	d.r.Write32(regQTXDP0+4*beaconQCU, d.descAddr(slot))
	d.r.Barrier()
	d.r.Write32(regQTXE, 1<<beaconQCU)
	d.r.Barrier()
	b.queued = true
}

// beaconStatus accounts a beacon's TX status. svcMu held.
func (d *Driver) beaconStatus(e *TxStatusEntry) {
	if e.CfgErr {
		d.Stats.TxDescErrors.Add(1)
		return
	}
	d.Stats.Beacons.Add(1)
}
