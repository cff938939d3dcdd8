package ar9300

import (
	"encoding/binary"
	"errors"
)

// Status words are in the chip's descriptor byte order, which the driver
// sets to the CPU's own (AR_CFG swap bits on big-endian hosts, as ath9k
// does), so they are read in native order.
var native = binary.NativeEndian

// RX status bits (ar9300desc.h ds_status11 and friends).
const (
	rxsDone        = 0x00000001
	rxsFrameOK     = 0x00000002
	rxsCRCErr      = 0x00000004
	rxsDecryptCRC  = 0x00000008
	rxsPHYErr      = 0x00000010
	rxsMichaelErr  = 0x00000020
	rxsKeyIdxValid = 0x00000100
	rxsKeyIdxMask  = 0x0000fe00
	rxsKeyIdxShift = 9
	rxsMoreAggr    = 0x00010000
	rxsAggr        = 0x00020000
	rxsFirstAggr   = 0x20000000
	rxsKeyMiss     = 0x80000000
	rxsDataLenMask = 0x00000fff // status2 AR_DataLen
	rxsMore        = 0x00001000 // status2 AR_RxMore: frame continues in the next buffer
	rxsRateShift   = 24         // status1 AR_RxRate
	rxsRSSIShift   = 24         // status5 AR_RxRSSICombined
	rxsGI          = 0x00000001 // status4 AR_GI
	rxs2040        = 0x00000002 // status4 AR_2040
)

// TX status bits (ar9300desc.h).
const (
	txsBaStatus   = 0x40000000 // status2
	txsFrmXmitOK  = 0x00000001 // status3
	txsExcessive  = 0x00000002
	txsFIFOUndrn  = 0x00000004
	txsFiltered   = 0x00000008
	txsRTSFailSh  = 4
	txsDataFailSh = 8
	txsDescCfgErr = 0x00040000
	txsDone       = 0x00000001 // status8
	txsSeqMask    = 0x00001ffe
	txsSeqShift   = 1
	txsFinalMask  = 0x00600000
	txsFinalShift = 21
)

// Errors from status parsing: the status is the hardware's and is not
// trusted.
var (
	ErrNotDone   = errors.New("ar9300: status not done")
	ErrBadStatus = errors.New("ar9300: malformed status")
)

// RxDesc is a parsed ar9003_rxs.
type RxDesc struct {
	DataLen   int // frame bytes after the status, FCS included
	Rate      uint8
	RSSI      int8
	GI, HT40  bool
	FrameOK   bool
	CRCErr    bool
	PHYErr    bool
	DecryptCR bool // CCMP MIC failure (the hardware reports it as a decrypt CRC error)
	Michael   bool
	KeyMiss   bool
	KeyValid  bool
	KeyIdx    int
	Aggr      bool
	MoreAggr  bool
	FirstAggr bool
	More      bool
	Timestamp uint32
}

// ParseRxStatus parses the 48-byte RX status at the start of an RX
// buffer of bufLen bytes. It checks the done bit first and reads nothing
// else before it; a status whose descriptor ID or direction is wrong, or
// whose length does not fit the buffer, is ErrBadStatus.
func ParseRxStatus(b []byte, bufLen int) (RxDesc, error) {
	var d RxDesc
	if len(b) < rxStatusSize {
		return d, ErrBadStatus
	}
	w11 := native.Uint32(b[44:])
	if w11&rxsDone == 0 {
		return d, ErrNotDone
	}
	info := native.Uint32(b[0:])
	if info>>infoDescIDSh != vendorID || info&(infoTxRxDesc|infoCtrlStat) != 0 {
		return d, ErrBadStatus
	}
	w1, w2, w4 := native.Uint32(b[4:]), native.Uint32(b[8:]), native.Uint32(b[16:])
	d.DataLen = int(w2 & rxsDataLenMask)
	d.More = w2&rxsMore != 0
	if d.DataLen > bufLen-rxStatusSize || bufLen < rxStatusSize {
		return d, ErrBadStatus
	}
	d.Rate = uint8(w1 >> rxsRateShift)
	d.RSSI = int8(native.Uint32(b[20:]) >> rxsRSSIShift)
	d.GI, d.HT40 = w4&rxsGI != 0, w4&rxs2040 != 0
	d.Timestamp = native.Uint32(b[12:])
	d.FrameOK = w11&rxsFrameOK != 0
	d.CRCErr = w11&rxsCRCErr != 0
	d.PHYErr = w11&rxsPHYErr != 0
	d.DecryptCR = w11&rxsDecryptCRC != 0
	d.Michael = w11&rxsMichaelErr != 0
	d.KeyMiss = w11&rxsKeyMiss != 0
	d.KeyValid = w11&rxsKeyIdxValid != 0
	d.KeyIdx = int(w11 & rxsKeyIdxMask >> rxsKeyIdxShift)
	d.Aggr = w11&rxsAggr != 0
	d.MoreAggr = w11&rxsMoreAggr != 0
	d.FirstAggr = w11&rxsFirstAggr != 0
	return d, nil
}

// TxStatusEntry is a parsed ar9003_txs.
type TxStatusEntry struct {
	QCU        int
	DescID     uint16
	OK         bool
	Excessive  bool
	CfgErr     bool
	Filtered   bool
	Underrun   bool
	LongTries  int // failed data attempts (AR_DataFailCnt)
	ShortTries int // failed RTS attempts (AR_RTSFailCnt)
	Final      int // AR_FinalTxIdx
	BA         bool
	BALow      uint32
	BAHigh     uint32
	SeqNum     uint16 // starting sequence number of the BlockAck bitmap
}

// ParseTxStatus parses the nine words of a TX status entry (in the order
// they are in the ring). The done bit must be set and the entry must say
// it is a TX status (descriptor ID, TxRxDesc set, CtrlStat clear).
func ParseTxStatus(w *[txStatusWords]uint32) (TxStatusEntry, error) {
	var e TxStatusEntry
	if w[8]&txsDone == 0 {
		return e, ErrNotDone
	}
	if w[0]>>infoDescIDSh != vendorID || w[0]&infoTxRxDesc == 0 || w[0]&infoCtrlStat != 0 {
		return e, ErrBadStatus
	}
	e.QCU = int(w[0] & infoQCUMask >> infoQCUShift)
	e.DescID = uint16(w[1] >> descIDShift)
	s3 := w[3]
	e.OK = s3&txsFrmXmitOK != 0
	e.Excessive = s3&txsExcessive != 0
	e.CfgErr = s3&txsDescCfgErr != 0
	e.Filtered = s3&txsFiltered != 0
	e.Underrun = s3&txsFIFOUndrn != 0
	e.ShortTries = int(s3 >> txsRTSFailSh & 0xf)
	e.LongTries = int(s3 >> txsDataFailSh & 0xf)
	e.Final = int(w[8] & txsFinalMask >> txsFinalShift)
	e.SeqNum = uint16(w[8] & txsSeqMask >> txsSeqShift)
	if w[2]&txsBaStatus != 0 {
		e.BA, e.BALow, e.BAHigh = true, w[5], w[6]
	}
	if e.QCU >= numQCU {
		return e, ErrBadStatus
	}
	return e, nil
}
