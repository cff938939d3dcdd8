// Package ar9300 drives the MAC of the Atheros/QCA AR9300 family of
// 802.11n chips: the WMAC built into AR934x and QCA955x SoCs (on AHB) and
// the AR9380 on PCIe. It implements radio.Radio and radio.KeyCache, the
// seam to gowrt's 802.11 MAC layer (wlan/radio).
//
// Shape. New(Config) allocates every DMA structure and touches no
// register; Start programs the MAC and enables interrupts; the board
// connects Interrupt to the WMAC's interrupt line; Stop quiesces it. Every
// path that touches registers (Start, Stop, Transmit, Interrupt, TSF,
// SetBeacon, the key cache) holds the chip awake through the refcounted
// force-awake of ath/power (Config.Power) for exactly as long as it
// touches them; a sleeping MAC answers 0xdeadbeef, which the driver never
// acts on.
//
// TX (EDMA). Each access category has its own QCU (BK 0, BE 1, VI 2, VO 3,
// ath9k's queue numbering) and a ring of 128-byte ar9003_txc descriptors
// in cached memory, written in the CPU's byte order (AR_CFG swap bits on
// big-endian hosts) and synced with busdma before the chain's first
// descriptor is pushed into the QCU's TX FIFO (AR_QTXDP, eight chains
// deep) and the queue started (AR_Q_TXE). One PPDU is one chain: one
// descriptor per MPDU, up to four buffer pointers each (MPDUs are mapped
// in place, zero-copy), the four-series rate schedule in the first and
// last descriptor, the key-cache slot and A-MPDU flags, and a 16-bit
// descriptor ID in every descriptor. Completion comes through the
// separate TX status ring (ar9003_txs, coherent memory): entries are
// consumed in order, the done word read before any other word, each
// checked (descriptor ID, direction, queue, and that its ID is the one
// the queue's oldest PPDU carries) and counted and skipped when wrong,
// never used to index anything. A completed PPDU's buffers are returned
// at once; its descriptors are held until the next PPDU of the queue
// completes, because the QCU may still hold the chain (and re-read its
// last descriptor) after it wrote the status (FreeBSD if_ath's holding
// descriptor, the same caution).
//
// RX (EDMA). Receive buffers (status + frame) sit in the high- and
// low-priority RXDP FIFOs (16 and 128 deep); each completes in FIFO order
// with the 48-byte ar9003_rxs at its start. The driver syncs the status,
// reads the done bit before anything else, parses the status with strict
// bounds (ParseRxStatus, fuzzed), hands the frame up with its RxStatus
// (CCMP decrypted by the key cache: Decrypted, with the MIC trimmed; MIC
// failure: DecryptErr; key miss: as received), then clears the status and
// re-queues the buffer. No buffer (RXEOL) or a full PCU FIFO (RXORN) is
// counted; nothing is reset, so the buffers already filled are not lost.
//
// Interrupts. AR_ISR and its secondaries are write-1-to-clear on this
// path (ar9003_hw_get_isr without the read-and-clear AR_ISR_RAC): the
// handler reads AR_ISR, reads and clears AR_ISR_S0/S1 when a TX cause is
// set and AR_ISR_S2 for BCNMISC, clears AR_ISR with the bits it read, then
// services RX, TX status and SWBA, and repeats while causes remain.
//
// Beacons. SetBeacon keeps a copy of the frame; at SWBA (6 TU before
// TBTT, ath9k's sw_beacon_response_time) the driver copies the current
// beacon into one of two DMA buffers and queues it on the beacon QCU,
// which the chip sends at DBA/TBTT with the TSF in the timestamp. If the
// previous beacon is still queued at SWBA (the SWBA was serviced too late
// and its TBTT passed), that is counted (Stats.BeaconMissed) and the stale
// beacon is aborted (AR_Q_TXD) before the current one is queued, so a
// beacon with an old TIM is never sent.
//
// Key cache. Install writes a CCMP-128 key (KEY0..4, TYPE, MAC words with
// VALID; drivers/net/wireless/ath/key.c's layout). Slots 0..3 are the group
// keys, indexed by key ID as the hardware looks them up; pairwise keys use
// slots 4..127. On transmit with a key the driver writes the CCMP header
// (PN from its per-slot counter; an MPDU resubmitted for a software retry
// keeps the PN it was first sent with) and the hardware encrypts and
// fills the MIC.
//
// What a real chip still needs (out of scope here): the baseband and
// radio: the initvals register tables (ar9003_2p2_initvals.h and the
// AR934x/QCA955x tables; calib.go keeps a first extract as data), the
// synthesizer programming for a channel (SetChannel only records the
// tuning), AGC/noise-floor/IQ/Tx-gain calibration, the EEPROM or flash
// calibration data and regulatory power limits, ANI, the PCIe/AHB reset
// sequence (AR_RTC_RC, host-interface reset and PLL), the DCU/QCU
// IFS/CWmin/CWmax/AIFS programming per access category, the RX filter and
// BSSID mask, RTS/CTS duration fields, and the MIB counters. TKIP and WEP
// keys are not programmed.
package ar9300

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/wlan/radio"
)

// Power is the refcounted force-awake (*power.Chip from ath/power): Hold
// wakes the chip (or keeps it awake) until the matching Release.
type Power interface {
	Hold() error
	Release() error
}

// Defaults and limits.
const (
	DefaultTxDescs   = 128  // descriptors per access-category ring
	DefaultTxStatus  = 256  // TX status ring entries (ath9k uses 512)
	DefaultRxBufs    = 128  // low-priority buffers (the FIFO depth)
	DefaultRxHPBufs  = 16   // high-priority buffers
	DefaultRxBufSize = 3904 // 3840-byte MPDU + status, rounded to the line (ath9k rx_bufsize)
	MaxAggr          = 64   // MPDUs per A-MPDU (BlockAck bitmap)
	maxTxBuf         = bufLenMax
	maxBeacon        = 1024
	txSegs           = 4 // buffer pointers per descriptor
	numAC            = 4
	intrPasses       = 4
	statusBudget     = 64
	stopPolls        = 1000
	ccmpHdrLen       = 8
	ccmpMICLen       = 8
	ccmpExtIV        = 0x20
	fcProtected      = 0x40
)

// Config describes one MAC.
type Config struct {
	Name  string
	Regs  barrier.Space   // the MAC's registers (AHB WMAC window or PCIe BAR0)
	DMA   busdma.Platform // where descriptors and buffers come from
	Power Power           // force-awake around every register access
	MAC   [6]byte         // station address (the BSSID)

	TxDescs   int // per access category; 0: DefaultTxDescs
	TxStatus  int // status ring entries; 0: DefaultTxStatus
	RxBufs    int // low-priority buffers (≤128); 0: DefaultRxBufs
	RxHPBufs  int // high-priority buffers (≤16); 0: DefaultRxHPBufs
	RxBufSize int // bytes per buffer including the status; 0: DefaultRxBufSize

	// Delay waits between polls; tests replace it. Default time.Sleep.
	Delay func(time.Duration)
}

// Stats are the driver's counters.
type Stats struct {
	TxPPDUs, TxMPDUs, TxAcked, TxFailed atomic.Uint64
	TxQueueFull                         atomic.Uint64
	TxStatusBad                         atomic.Uint64 // malformed or unexpected status entries
	TxDescErrors                        atomic.Uint64 // chains the chip refused (DescCfgErr)
	RxFrames, RxDropped                 atomic.Uint64
	RxStatusBad                         atomic.Uint64
	RxCRC, RxPHY                        atomic.Uint64
	RxDecrypted, RxMIC, RxKeyMiss       atomic.Uint64
	RxNoBuffer, RxOverrun               atomic.Uint64 // RXEOL and RXORN interrupts
	Interrupts, DeadReads               atomic.Uint64
	Beacons, BeaconMissed               atomic.Uint64
	PowerErrors                         atomic.Uint64
}

// Errors.
var (
	ErrConfig     = errors.New("ar9300: bad configuration")
	ErrNotStarted = errors.New("ar9300: not started")
	ErrRequest    = errors.New("ar9300: bad transmit request")
	ErrKey        = errors.New("ar9300: bad key")
)

// Driver is one AR9300 MAC.
type Driver struct {
	cfg Config
	r   barrier.Space
	pw  Power

	// TX descriptors of every ring, one cached block, loaded once.
	descMem []byte
	descMap *busdma.Map
	descBus uint64
	txTag   *busdma.Tag

	txMu  sync.Mutex // queue state; not held while calling Done
	svcMu sync.Mutex // one service pass at a time (Interrupt, Stop)
	ac    [numAC]txQueue
	txSt  radio.TxStatus // the status handed to Done (svcMu)

	ts     barrier.Space // TX status ring (coherent)
	tsBus  uint64
	tsN    int
	tsHead int

	rxq  [2]rxQueue // 0 high priority, 1 low priority
	rxSt radio.RxStatus
	recv radio.Receiver

	keyMu sync.Mutex
	keys  [keySlots]keySlot

	bcn beacon

	started atomic.Bool
	channel atomic.Uint32
	nextID  uint16

	hz hazards

	Stats Stats
}

// New validates cfg and allocates the descriptor rings, the status ring
// and the receive buffers. It touches no register.
func New(cfg Config) (*Driver, error) {
	if cfg.Regs == nil || cfg.DMA == nil || cfg.Power == nil {
		return nil, fmt.Errorf("%w: Regs, DMA and Power are required", ErrConfig)
	}
	if cfg.Name == "" {
		cfg.Name = "ath0"
	}
	def := func(v *int, d, hi int) error {
		if *v == 0 {
			*v = d
		}
		if *v < 1 || *v > hi {
			return fmt.Errorf("%w: %d outside 1..%d", ErrConfig, *v, hi)
		}
		return nil
	}
	line := cfg.DMA.LineSize()
	for _, e := range []error{
		def(&cfg.TxDescs, DefaultTxDescs, 4096),
		def(&cfg.TxStatus, DefaultTxStatus, 4096),
		def(&cfg.RxBufs, DefaultRxBufs, rxLPFIFODepth),
		def(&cfg.RxHPBufs, DefaultRxHPBufs, rxHPFIFODepth),
		def(&cfg.RxBufSize, DefaultRxBufSize, 0xfff),
	} {
		if e != nil {
			return nil, e
		}
	}
	if cfg.TxDescs < 2 {
		return nil, fmt.Errorf("%w: at least 2 descriptors per ring", ErrConfig)
	}
	cfg.RxBufSize = (cfg.RxBufSize + line - 1) &^ (line - 1)
	if cfg.RxBufSize > 0xfff {
		cfg.RxBufSize -= line
	}
	if cfg.RxBufSize < rxStatusSize+64 {
		return nil, fmt.Errorf("%w: RX buffer size %d", ErrConfig, cfg.RxBufSize)
	}
	if cfg.Delay == nil {
		cfg.Delay = time.Sleep
	}
	d := &Driver{cfg: cfg, r: cfg.Regs, pw: cfg.Power}
	if err := d.allocTX(); err != nil {
		return nil, err
	}
	if err := d.allocRX(); err != nil {
		return nil, err
	}
	if err := d.allocBeacon(); err != nil {
		return nil, err
	}
	return d, nil
}

var _ radio.Radio = (*Driver)(nil)
var _ radio.KeyCache = (*Driver)(nil)

// Address implements radio.Radio.
func (d *Driver) Address() [6]byte { return d.cfg.MAC }

// KeyCache implements radio.Radio.
func (d *Driver) KeyCache() radio.KeyCache { return d }

// hold and release bracket every register access path.
func (d *Driver) hold() error {
	if d.hz.noHold() {
		return nil
	}
	if err := d.pw.Hold(); err != nil {
		d.Stats.PowerErrors.Add(1)
		return err
	}
	return nil
}

func (d *Driver) release() {
	if d.hz.noHold() {
		return
	}
	if err := d.pw.Release(); err != nil {
		d.Stats.PowerErrors.Add(1)
	}
}

// Start programs the MAC and begins delivering frames to r.
func (d *Driver) Start(r radio.Receiver) error {
	if r == nil {
		return fmt.Errorf("%w: nil receiver", ErrConfig)
	}
	if d.started.Load() {
		return nil
	}
	if err := d.hold(); err != nil {
		return err
	}
	defer d.release()
	d.recv = r
	w := d.r.Write32
	if cpuBigEndian {
		w(regCFG, cfgSwapTxD|cfgSwapRxD)
	} else {
		w(regCFG, 0)
	}
	mac := d.cfg.MAC
	lo := uint32(mac[0]) | uint32(mac[1])<<8 | uint32(mac[2])<<16 | uint32(mac[3])<<24
	hi := uint32(mac[4]) | uint32(mac[5])<<8
	w(regStaID0, lo)
	w(regStaID1, hi|staID1AP)
	w(regBSSID0, lo)
	w(regBSSID1, hi)
	w(regDataBuf, uint32(d.cfg.RxBufSize))
	d.resetStatusRing()
	w(regQStatusStart, uint32(d.tsBus))
	w(regQStatusEnd, uint32(d.tsBus)+uint32(d.tsN*txStatusSize))
	for i := range d.rxq {
		if err := d.rxq[i].armAll(d); err != nil {
			return err
		}
	}
	w(regCR, 0) // receive on (ar9003_hw_rx_enable)
	w(regIMR, isrHPRXOK|isrLPRXOK|isrRXERR|isrRXEOL|isrRXORN|isrTXOK|isrTXERR|isrSWBA|isrBCNMISC)
	w(regIER, ierEnable)
	d.r.Barrier()
	d.started.Store(true)
	return nil
}

// Stop quiesces the MAC: interrupts off, queues aborted, receive off; every
// queued request completes with radio.ErrStopped.
func (d *Driver) Stop() {
	if !d.started.Swap(false) {
		return
	}
	d.svcMu.Lock()
	defer d.svcMu.Unlock()
	if d.hold() == nil {
		w := d.r.Write32
		w(regIER, 0)
		w(regIMR, 0)
		w(regTimerMode, 0)
		w(regQTXD, 1<<numQCU-1)
		w(regCR, crRXD)
		d.r.Barrier()
		for i := 0; i < stopPolls && d.r.Read32(regQTXE)&(1<<numQCU-1) != 0; i++ {
			d.cfg.Delay(10 * time.Microsecond)
		}
		w(regQTXD, 0)
		d.r.Barrier()
		d.release()
	}
	for i := range d.ac {
		d.flushQueue(&d.ac[i])
	}
	for i := range d.rxq {
		d.rxq[i].unloadAll()
	}
	d.bcn.mu.Lock()
	d.bcn.queued = false
	d.bcn.mu.Unlock()
}

// SetChannel implements radio.Radio. Tuning the synthesizer and baseband
// is out of scope (see the package documentation); the channel is
// recorded for RxStatus.
func (d *Driver) SetChannel(ch radio.Channel) error {
	if ch.Number == 0 {
		return fmt.Errorf("%w: channel 0", ErrConfig)
	}
	d.channel.Store(uint32(ch.Number))
	return nil
}

// TSF implements radio.Radio: the 64-bit TSF read as ath9k_hw_gettsf64
// does (upper, lower, upper again; retry when the upper half moved).
func (d *Driver) TSF() uint64 {
	if d.hold() != nil {
		return 0
	}
	defer d.release()
	for i := 0; i < 10; i++ {
		hi := d.r.Read32(regTSFU32)
		lo := d.r.Read32(regTSFL32)
		if d.r.Read32(regTSFU32) == hi {
			if hi == deadRead || lo == deadRead {
				d.Stats.DeadReads.Add(1)
			}
			return uint64(hi)<<32 | uint64(lo)
		}
	}
	return 0
}

// Interrupt services the MAC; the board calls it for the WMAC's line.
// The receiver's Receive and the requests' Done run from it; they may
// call Transmit, SetBeacon and the key cache, but not Stop.
func (d *Driver) Interrupt() {
	d.svcMu.Lock()
	defer d.svcMu.Unlock()
	if !d.started.Load() {
		return
	}
	if d.hold() != nil {
		return
	}
	defer d.release()
	d.Stats.Interrupts.Add(1)
	r := d.r
	for pass := 0; pass < intrPasses; pass++ {
		isr := r.Read32(regISR)
		if isr == deadRead {
			d.Stats.DeadReads.Add(1)
			return
		}
		if isr == 0 {
			return
		}
		if isr&(isrTXOK|isrTXERR|isrTXEOL) != 0 {
			r.Write32(regISRS0, r.Read32(regISRS0))
			r.Write32(regISRS1, r.Read32(regISRS1))
		}
		if isr&isrBCNMISC != 0 {
			r.Write32(regISRS2, r.Read32(regISRS2))
		}
		r.Write32(regISR, isr)
		r.Barrier()
		if isr&isrRXEOL != 0 {
			d.Stats.RxNoBuffer.Add(1)
		}
		if isr&isrRXORN != 0 {
			d.Stats.RxOverrun.Add(1)
			if d.hz.resetOnOverrun() {
				d.wrongRXReset()
			}
		}
		if isr&(isrHPRXOK|isrLPRXOK|isrRXERR|isrRXEOL|isrRXORN) != 0 {
			d.serviceRX()
		}
		if isr&(isrTXOK|isrTXERR|isrTXEOL) != 0 {
			d.serviceTX()
		}
		if isr&isrSWBA != 0 {
			d.swba()
		}
	}
}
