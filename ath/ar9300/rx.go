package ar9300

import (
	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/wlan/radio"
)

// rxQueue is one RX FIFO's buffers, completed in the order queued.
type rxQueue struct {
	reg  uint32 // AR_HP_RXDP or AR_LP_RXDP
	bufs [][]byte
	maps []*busdma.Map
	bus  []uint32
	head int
}

func (d *Driver) allocRX() error {
	tag, err := busdma.NewTag(d.cfg.DMA, busdma.TagConfig{Name: d.cfg.Name + "-rx",
		Alignment: d.cfg.DMA.LineSize(), MaxSize: d.cfg.RxBufSize, BounceBuffers: 1})
	if err != nil {
		return err
	}
	counts := [2]int{d.cfg.RxHPBufs, d.cfg.RxBufs}
	regs := [2]uint32{regHPRXDP, regLPRXDP}
	for i := range d.rxq {
		q := &d.rxq[i]
		q.reg = regs[i]
		for j := 0; j < counts[i]; j++ {
			b, err := tag.Alloc(d.cfg.RxBufSize)
			if err != nil {
				return err
			}
			m, err := tag.NewMap()
			if err != nil {
				return err
			}
			q.bufs = append(q.bufs, b)
			q.maps = append(q.maps, m)
			q.bus = append(q.bus, 0)
		}
	}
	return nil
}

// armAll loads and queues every buffer (Start; chip held awake).
func (q *rxQueue) armAll(d *Driver) error {
	q.head = 0
	for i, b := range q.bufs {
		m := q.maps[i]
		if !m.Loaded() {
			segs, err := m.Load(b, busdma.Bidirectional)
			if err != nil {
				return err
			}
			q.bus[i] = uint32(segs[0].Addr)
		}
		if err := q.arm(d, i); err != nil {
			return err
		}
	}
	return nil
}

// arm clears buffer i's status, hands the buffer to the device and queues
// it (ath9k ath_rx_edma_buf_link: clear the status, sync to the device,
// push the address). The chip is held awake by the caller.
func (q *rxQueue) arm(d *Driver, i int) error {
	clear(q.bufs[i][:rxStatusSize])
	if err := q.maps[i].Sync(busdma.PreWrite | busdma.PreRead); err != nil {
		return err
	}
	d.r.Write32(q.reg, q.bus[i])
	return nil
}

func (q *rxQueue) unloadAll() {
	for _, m := range q.maps {
		if m.Loaded() {
			_ = m.Unload()
		}
	}
}

// serviceRX drains both FIFOs. svcMu held, chip awake.
func (d *Driver) serviceRX() {
	for i := range d.rxq {
		d.drainRX(&d.rxq[i])
	}
	d.r.Barrier()
}

func (d *Driver) drainRX(q *rxQueue) {
	bufLen := d.cfg.RxBufSize
	for n := 0; n < len(q.bufs); n++ {
		i := q.head
		m, b := q.maps[i], q.bufs[i]
		var desc RxDesc
		var err error
		if d.hz.statusBeforeDone() {
			// Wrong: the fields from one look, the done bit from a later one.
			_ = m.SyncRange(busdma.PostRead, 0, rxStatusSize)
			var early [rxStatusSize]byte
			copy(early[:], b[:rxStatusSize])
			_ = m.SyncRange(busdma.PostRead, 0, rxStatusSize)
			copy(early[44:], b[44:rxStatusSize])
			desc, err = ParseRxStatus(early[:], bufLen)
		} else {
			if m.SyncRange(busdma.PostRead, 0, rxStatusSize) != nil {
				return
			}
			desc, err = ParseRxStatus(b[:rxStatusSize], bufLen)
		}
		if err == ErrNotDone {
			return
		}
		q.head = (q.head + 1) % len(q.bufs)
		if err != nil {
			d.Stats.RxStatusBad.Add(1)
		} else {
			d.deliver(m, b, &desc)
		}
		if q.arm(d, i) != nil {
			d.Stats.RxDropped.Add(1)
		}
	}
}

// deliver hands one received frame up.
func (d *Driver) deliver(m *busdma.Map, b []byte, desc *RxDesc) {
	switch {
	case desc.More:
		// Frames longer than a buffer are not used (buffers hold the
		// largest MPDU); the continuation would be dropped as a bad start.
		d.Stats.RxDropped.Add(1)
		return
	case desc.CRCErr:
		d.Stats.RxCRC.Add(1)
		return
	case desc.PHYErr:
		d.Stats.RxPHY.Add(1)
		return
	case desc.DataLen < fcsLen+10:
		d.Stats.RxDropped.Add(1)
		return
	}
	if m.SyncRange(busdma.PostRead, rxStatusSize, desc.DataLen) != nil {
		d.Stats.RxDropped.Add(1)
		return
	}
	frame := b[rxStatusSize : rxStatusSize+desc.DataLen-fcsLen]
	st := &d.rxSt
	*st = radio.RxStatus{}
	st.RSSI = desc.RSSI
	st.Channel = uint8(d.channel.Load())
	st.Rate = rateFromCode(desc.Rate, desc.HT40, desc.GI)
	st.InAMPDU = desc.Aggr
	st.AMPDULast = desc.Aggr && !desc.MoreAggr
	st.AMPDUFirst = desc.FirstAggr
	protected := len(frame) > 1 && frame[1]&fcProtected != 0
	switch {
	case desc.FrameOK && desc.KeyValid && protected:
		if len(frame) < 24+ccmpHdrLen+ccmpMICLen {
			d.Stats.RxDropped.Add(1)
			return
		}
		frame = frame[:len(frame)-ccmpMICLen] // the hardware leaves the MIC
		st.Decrypted = true
		d.Stats.RxDecrypted.Add(1)
	case !desc.FrameOK && (desc.DecryptCR || desc.Michael):
		st.DecryptErr = true
		d.Stats.RxMIC.Add(1)
	case !desc.FrameOK:
		d.Stats.RxDropped.Add(1)
		return
	}
	if desc.KeyMiss {
		d.Stats.RxKeyMiss.Add(1)
	}
	d.Stats.RxFrames.Add(1)
	d.recv.Receive(frame, st)
}

// rateFromCode maps a received rate code back to a rate.
func rateFromCode(c uint8, ht40, sgi bool) airtime.Rate {
	if c&0x80 != 0 {
		return airtime.MCS(c&0x7f, ht40, sgi)
	}
	switch c {
	case 0x0b:
		return airtime.Legacy(6000)
	case 0x0f:
		return airtime.Legacy(9000)
	case 0x0a:
		return airtime.Legacy(12000)
	case 0x0e:
		return airtime.Legacy(18000)
	case 0x09:
		return airtime.Legacy(24000)
	case 0x0d:
		return airtime.Legacy(36000)
	case 0x08:
		return airtime.Legacy(48000)
	case 0x0c:
		return airtime.Legacy(54000)
	case 0x1b:
		return airtime.Legacy(1000)
	case 0x1a, 0x1e:
		return airtime.Legacy(2000)
	case 0x19, 0x1d:
		return airtime.Legacy(5500)
	case 0x18, 0x1c:
		return airtime.Legacy(11000)
	}
	return airtime.Rate{}
}

// wrongRXReset is the wrong recovery from an overrun the hazard test
// shows: reset the receive path, re-queueing every buffer without
// looking at what it holds (-tags gowrt_hazard only).
func (d *Driver) wrongRXReset() {
	for i := range d.rxq {
		q := &d.rxq[i]
		for j := range q.bufs {
			_ = q.maps[j].SyncRange(busdma.PostRead, 0, rxStatusSize)
			if native.Uint32(q.bufs[j][44:])&rxsDone != 0 {
				_ = q.arm(d, j)
			}
		}
	}
}
