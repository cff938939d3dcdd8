package ar9300

import (
	"encoding/binary"
	"fmt"

	"github.com/gowrt/gowrt/ath/airtime"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/wlan/radio"
)

// acQCU maps the radio contract's queues (0 BE, 1 BK, 2 VI, 3 VO) to
// ath9k's QCU numbers (ath9k_tx_queue_subtype: BK 0, BE 1, VI 2, VO 3).
var acQCU = [numAC]int{1, 0, 2, 3}

// ppdu is one chain in a QCU's FIFO.
type ppdu struct {
	req   *radio.TxRequest
	first int // ring index of its first descriptor
	n     int // descriptors
	id    uint16
}

// txQueue is one access category's descriptor ring and the chains in its
// QCU FIFO, oldest first.
type txQueue struct {
	qcu   int
	base  int // index of the ring's first descriptor in descMem
	n     int
	tail  int // next free descriptor
	used  int // descriptors in use, held chain included
	maps  []*busdma.Map
	fifo  [txFIFODepth]ppdu
	fh    int
	fn    int
	held  ppdu // completed chain whose descriptors the QCU may still read
	hasHd bool
}

func (d *Driver) allocTX() error {
	var err error
	d.txTag, err = busdma.NewTag(d.cfg.DMA, busdma.TagConfig{Name: d.cfg.Name + "-tx",
		Alignment: 1, MaxSize: txSegs * maxTxBuf, MaxSegSize: maxTxBuf, MaxSegments: txSegs, BounceBuffers: 8})
	if err != nil {
		return err
	}
	ndesc := numAC*d.cfg.TxDescs + 2 // two beacon descriptors
	descTag, err := busdma.NewTag(d.cfg.DMA, busdma.TagConfig{Name: d.cfg.Name + "-desc",
		Alignment: txDescSize, MaxSize: ndesc * txDescSize, BounceBuffers: 1})
	if err != nil {
		return err
	}
	d.descMem, err = descTag.Alloc(ndesc * txDescSize)
	if err != nil {
		return err
	}
	if d.descMap, err = descTag.NewMap(); err != nil {
		return err
	}
	segs, err := d.descMap.Load(d.descMem, busdma.ToDevice)
	if err != nil {
		return err
	}
	if len(segs) != 1 {
		return fmt.Errorf("%w: descriptor block not contiguous", ErrConfig)
	}
	d.descBus = segs[0].Addr
	for i := range d.ac {
		q := &d.ac[i]
		q.qcu, q.base, q.n = acQCU[i], i*d.cfg.TxDescs, d.cfg.TxDescs
		q.maps = make([]*busdma.Map, q.n)
		for j := range q.maps {
			if q.maps[j], err = d.txTag.NewMap(); err != nil {
				return err
			}
		}
	}
	d.tsN = d.cfg.TxStatus
	d.ts, d.tsBus, err = d.cfg.DMA.AllocCoherent(d.cfg.Name+"-txstatus", d.tsN*txStatusSize, 8, barrier.Native)
	return err
}

func (d *Driver) resetStatusRing() {
	for i := 0; i < d.tsN*txStatusWords; i++ {
		d.ts.Write32(uint32(4*i), 0)
	}
	d.ts.Barrier()
	d.tsHead = 0
}

func (d *Driver) desc(i int) []byte { return d.descMem[i*txDescSize : (i+1)*txDescSize] }
func (d *Driver) descAddr(i int) uint32 {
	return uint32(d.descBus) + uint32(i*txDescSize)
}

// rateCode is the descriptor's rate byte for r (ath9k rate tables;
// ar9300desc.h VALID_TX_RATES for the legacy codes).
func rateCode(r airtime.Rate) (code uint8, flags uint32, ok bool) {
	switch r.Mod {
	case airtime.HT:
		if r.MCS > 31 {
			return 0, 0, false
		}
		if r.HT40 {
			flags |= 1 // AR_2040_n
		}
		if r.SGI {
			flags |= 2 // AR_GIn
		}
		return 0x80 | r.MCS, flags, true
	case airtime.OFDM:
		switch r.Kbps {
		case 6000:
			return 0x0b, 0, true
		case 9000:
			return 0x0f, 0, true
		case 12000:
			return 0x0a, 0, true
		case 18000:
			return 0x0e, 0, true
		case 24000:
			return 0x09, 0, true
		case 36000:
			return 0x0d, 0, true
		case 48000:
			return 0x08, 0, true
		case 54000:
			return 0x0c, 0, true
		}
	case airtime.CCK:
		short := uint8(0)
		if r.ShortPreamble {
			short = 4
		}
		switch r.Kbps {
		case 1000:
			return 0x1b, 0, true
		case 2000:
			return 0x1a + short, 0, true
		case 5500:
			return 0x19 + short, 0, true
		case 11000:
			return 0x18 + short, 0, true
		}
	}
	return 0, 0, false
}

// series packs the retry schedule into ctl13 (tries), ctl14 (rates) and
// ctl18 (per-series 20/40 and guard interval; AR_2040_n at bit 5n,
// AR_GIn at bit 5n+1).
func series(s *[radio.MaxSeries]radio.Series) (c13, c14, c18 uint32, err error) {
	for i, e := range s {
		if e.Tries == 0 {
			continue
		}
		code, fl, ok := rateCode(e.Rate)
		if !ok {
			return 0, 0, 0, fmt.Errorf("%w: series %d rate %+v", ErrRequest, i, e.Rate)
		}
		c13 |= uint32(min(e.Tries, 15)) << (ctl13TriesSh + 4*i)
		c14 |= uint32(code) << (8 * i)
		c18 |= fl << (5 * i)
	}
	if c13 == 0 {
		return 0, 0, 0, fmt.Errorf("%w: no series with tries", ErrRequest)
	}
	return c13, c14, c18, nil
}

func put32(b []byte, i int, v uint32) { native.PutUint32(b[4*i:], v) }

// Transmit implements radio.Radio. It allocates nothing. It may be called
// from Done and Receive callbacks.
func (d *Driver) Transmit(req *radio.TxRequest) error {
	if !d.started.Load() {
		return ErrNotStarted
	}
	n := len(req.MPDUs)
	if n == 0 || n > MaxAggr || int(req.Queue) >= numAC || req.Done == nil {
		return fmt.Errorf("%w: %d MPDUs, queue %d", ErrRequest, n, req.Queue)
	}
	c13, c14, c18, err := series(&req.Series)
	if err != nil {
		return err
	}
	if req.Key != radio.NoKey && (req.Key < 0 || req.Key >= keySlots) {
		return fmt.Errorf("%w: key slot %d", ErrRequest, req.Key)
	}
	d.txMu.Lock()
	q := &d.ac[req.Queue]
	if q.fn >= txFIFODepth || q.n-q.used < n {
		d.txMu.Unlock()
		d.Stats.TxQueueFull.Add(1)
		return radio.ErrQueueFull
	}
	if req.Key != radio.NoKey {
		if err := d.writeCCMPHeaders(req); err != nil {
			d.txMu.Unlock()
			return err
		}
	}
	d.nextID++
	id := d.nextID
	first := q.tail
	aggLen := 0
	for _, f := range req.MPDUs {
		aggLen += len(f) + fcsLen
	}
	for i, f := range req.MPDUs {
		slot := (first + i) % q.n
		if len(f) < 10 || len(f)+fcsLen > 0xfff {
			d.unloadRange(q, first, i)
			d.txMu.Unlock()
			return fmt.Errorf("%w: MPDU %d of %d bytes", ErrRequest, i, len(f))
		}
		segs, err := q.maps[slot].Load(f, busdma.ToDevice)
		if err == nil {
			err = q.maps[slot].Sync(busdma.PreWrite)
		}
		if err != nil {
			d.unloadRange(q, first, i+1)
			d.txMu.Unlock()
			return err
		}
		ds := d.desc(q.base + slot)
		clear(ds)
		put32(ds, 0, vendorID<<infoDescIDSh|infoTxRxDesc|infoCtrlStat|uint32(q.qcu)<<infoQCUShift|txDescWords)
		if i+1 < n {
			put32(ds, 1, d.descAddr(q.base+(first+i+1)%q.n))
		}
		for k, s := range segs {
			put32(ds, 2+2*k, uint32(s.Addr))
			put32(ds, 3+2*k, uint32(s.Len)<<bufLenShift)
		}
		put32(ds, 10, uint32(id)<<descIDShift|ptrChecksum(ds))
		c11 := uint32(len(f)+fcsLen) | ctl11ClrDest
		c12 := uint32(0)
		c17 := uint32(0)
		if i == n-1 {
			c11 |= ctl11IntrReq
		}
		if req.RTS {
			c11 |= ctl11RTS
		}
		if req.Key != radio.NoKey {
			c11 |= ctl11DestIdx
			c12 |= uint32(req.Key) << ctl12DestSh
			c17 |= encrAES << ctl17EncrSh
		}
		if req.NoAck {
			c12 |= ctl12NoAck
		}
		if n > 1 {
			c12 |= ctl12IsAggr
			if i < n-1 {
				c12 |= ctl12MoreAggr
			}
			if i == 0 {
				c17 |= uint32(min(aggLen, 0xffff))
			}
		}
		put32(ds, 11, c11)
		put32(ds, 12, c12)
		if i == 0 || i == n-1 {
			put32(ds, 13, c13)
			put32(ds, 14, c14)
			put32(ds, 18, c18)
		}
		put32(ds, 17, c17)
		put32(ds, 19, ctl19NotSound)
		if err := d.descMap.SyncRange(busdma.PreWrite, (q.base+slot)*txDescSize, txDescSize); err != nil {
			d.unloadRange(q, first, i+1)
			d.txMu.Unlock()
			return err
		}
	}
	if err := d.hold(); err != nil {
		d.unloadRange(q, first, n)
		d.txMu.Unlock()
		return err
	}
	q.tail = (first + n) % q.n
	q.used += n
	q.fifo[(q.fh+q.fn)%txFIFODepth] = ppdu{req: req, first: first, n: n, id: id}
	q.fn++
	d.r.Write32(regQTXDP0+4*uint32(q.qcu), d.descAddr(q.base+first))
	d.r.Barrier() // the chain is in the FIFO before the queue is started
	d.r.Write32(regQTXE, 1<<q.qcu)
	d.r.Barrier()
	d.release()
	d.txMu.Unlock()
	d.Stats.TxPPDUs.Add(1)
	d.Stats.TxMPDUs.Add(uint64(n))
	return nil
}

// ptrChecksum is ar9003_calc_ptr_chksum: the 16-bit folded sum of words
// 0..9 (info, link, buffer pointers and lengths).
func ptrChecksum(ds []byte) uint32 {
	var s uint32
	for i := 0; i < 10; i++ {
		s += native.Uint32(ds[4*i:])
	}
	return (s&0xffff + s>>16) & 0xffff
}

func (d *Driver) unloadRange(q *txQueue, first, n int) {
	for i := 0; i < n; i++ {
		_ = q.maps[(first+i)%q.n].Unload()
	}
}

// writeCCMPHeaders fills each MPDU's CCMP header with the slot's next PN
// (IEEE 802.11-2016 12.5.3.2: PN0 PN1 reserved KeyID|ExtIV PN2..PN5). An
// MPDU whose header already has Ext IV set was sent before and keeps its
// PN (the MAC layer leaves the header zero for a new MPDU). txMu held.
func (d *Driver) writeCCMPHeaders(req *radio.TxRequest) error {
	d.keyMu.Lock()
	defer d.keyMu.Unlock()
	k := &d.keys[req.Key]
	if !k.used {
		return fmt.Errorf("%w: slot %d is empty", ErrKey, req.Key)
	}
	for _, f := range req.MPDUs {
		hl := headerLen(f)
		if hl == 0 || len(f) < hl+ccmpHdrLen+ccmpMICLen || f[1]&fcProtected == 0 {
			return fmt.Errorf("%w: MPDU not laid out for CCMP", ErrRequest)
		}
	}
	for _, f := range req.MPDUs {
		hl := headerLen(f)
		h := f[hl : hl+ccmpHdrLen]
		if h[3]&ccmpExtIV != 0 {
			// A software retransmission: the MPDU keeps the PN it was
			// first sent with, or a receiver that reorders by sequence
			// number would see the PNs go backwards and drop the frames
			// after it as replays.
			continue
		}
		k.pn++
		pn := k.pn
		h[0], h[1], h[2], h[3] = byte(pn), byte(pn>>8), 0, k.keyID<<6|ccmpExtIV
		binary.LittleEndian.PutUint32(h[4:], uint32(pn>>16))
	}
	return nil
}

// headerLen is the 802.11 MAC header length of a data or management frame
// (IEEE 802.11-2016 9.3), 0 for anything else.
func headerLen(f []byte) int {
	if len(f) < 24 {
		return 0
	}
	fc0, fc1 := f[0], f[1]
	switch fc0 & 0x0c {
	case 0x00:
		n := 24
		if fc1&0x80 != 0 {
			n += 4
		}
		return n
	case 0x08:
		n := 24
		if fc1&3 == 3 {
			n += 6
		}
		if fc0&0x80 != 0 {
			n += 2
			if fc1&0x80 != 0 {
				n += 4
			}
		}
		if len(f) < n {
			return 0
		}
		return n
	}
	return 0
}

// serviceTX consumes the TX status ring. svcMu held, chip held awake.
func (d *Driver) serviceTX() {
	var w [txStatusWords]uint32
	for budget := 0; budget < statusBudget; budget++ {
		base := uint32(d.tsHead * txStatusSize)
		if d.hz.statusBeforeDone() {
			for i := 0; i < 8; i++ {
				w[i] = d.ts.Read32(base + uint32(4*i))
			}
			w[8] = d.ts.Read32(base + 32)
			if w[8]&txsDone == 0 {
				return
			}
		} else {
			w[8] = d.ts.Read32(base + 32)
			if w[8]&txsDone == 0 {
				return
			}
			d.ts.Barrier()
			for i := 0; i < 8; i++ {
				w[i] = d.ts.Read32(base + uint32(4*i))
			}
		}
		for i := 0; i < txStatusWords; i++ {
			d.ts.Write32(base+uint32(4*i), 0)
		}
		d.ts.Barrier()
		d.tsHead = (d.tsHead + 1) % d.tsN
		e, err := ParseTxStatus(&w)
		if err != nil {
			d.Stats.TxStatusBad.Add(1)
			continue
		}
		if e.QCU == beaconQCU {
			d.beaconStatus(&e)
			continue
		}
		d.complete(&e)
	}
}

// complete matches a status entry to the oldest chain of its queue.
func (d *Driver) complete(e *TxStatusEntry) {
	d.txMu.Lock()
	var q *txQueue
	for i := range d.ac {
		if d.ac[i].qcu == e.QCU {
			q = &d.ac[i]
		}
	}
	if q == nil || q.fn == 0 || q.fifo[q.fh].id != e.DescID {
		d.txMu.Unlock()
		d.Stats.TxStatusBad.Add(1)
		return
	}
	p := q.fifo[q.fh]
	q.fifo[q.fh] = ppdu{}
	q.fh = (q.fh + 1) % txFIFODepth
	q.fn--
	d.unloadRange(q, p.first, p.n)
	// The previous chain's descriptors are free now: the QCU completed a
	// later chain, so it has let go of the earlier one.
	if q.hasHd {
		q.used -= q.held.n
		q.hasHd = false
	}
	if d.hz.reclaimOnStatus() {
		q.used -= p.n
	} else {
		q.held, q.hasHd = p, true
	}
	d.txMu.Unlock()

	st := &d.txSt
	// AR_DataFailCnt counts the failed data attempts; a delivered frame
	// adds the attempt that worked (ath9k's rate control does the same).
	tries := e.LongTries
	if e.OK {
		tries++
	}
	*st = radio.TxStatus{FinalSeries: e.Final, LongTries: tries, ShortTries: e.ShortTries}
	req := p.req
	switch {
	case e.CfgErr:
		d.Stats.TxDescErrors.Add(1)
		st.Err = fmt.Errorf("%w: the chip refused the descriptor chain", ErrRequest)
	case e.OK && len(req.MPDUs) > 1:
		if e.BA {
			st.BlockAck = mapBlockAck(req.MPDUs, e.SeqNum, uint64(e.BAHigh)<<32|uint64(e.BALow))
		}
		st.Acked = st.BlockAck != 0
	case e.OK:
		st.Acked, st.BlockAck = true, 1
	}
	if st.Acked {
		d.Stats.TxAcked.Add(1)
	} else {
		d.Stats.TxFailed.Add(1)
	}
	req.Done(req, st)
}

// mapBlockAck turns a BlockAck bitmap starting at ssn into bits in request
// order (bit i for MPDUs[i]).
func mapBlockAck(mpdus [][]byte, ssn uint16, bitmap uint64) uint64 {
	var out uint64
	for i, f := range mpdus {
		if len(f) < 24 {
			continue
		}
		seq := binary.LittleEndian.Uint16(f[22:]) >> 4
		off := (seq - ssn) & 0xfff
		if off < 64 && bitmap&(1<<off) != 0 {
			out |= 1 << i
		}
	}
	return out
}

// flushQueue completes every chain of q with ErrStopped. svcMu held.
func (d *Driver) flushQueue(q *txQueue) {
	for {
		d.txMu.Lock()
		if q.fn == 0 {
			q.used, q.hasHd = 0, false
			d.txMu.Unlock()
			return
		}
		p := q.fifo[q.fh]
		q.fifo[q.fh] = ppdu{}
		q.fh = (q.fh + 1) % txFIFODepth
		q.fn--
		d.unloadRange(q, p.first, p.n)
		d.txMu.Unlock()
		d.txSt = radio.TxStatus{Err: radio.ErrStopped}
		p.req.Done(p.req, &d.txSt)
	}
}
