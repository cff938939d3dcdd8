package ar9300sim

// Register and descriptor facts the model implements. The model keeps its
// own copy (it does not import the driver), so a driver constant that is
// wrong does not silently agree with the model.
//
// Sources (facts only): Linux drivers/net/wireless/ath/ath9k/reg.h,
// ar9003_mac.h, ar9003_mac.c, mac.h, hw.c; QCA's open ath_hal
// ar9300/ar9300reg.h and ar9300desc.h; FreeBSD sys/dev/ath/ath_hal/ar5416/
// ar5416reg.h for the registers the family shares.
const (
	RegCR       = 0x0008 // AR_CR: command; ar9003_hw_rx_enable writes 0
	CRRXD       = 0x0020 // AR_CR_RXD: receive disable
	RegCFG      = 0x0014 // AR_CFG: descriptor byte swap (ath9k hw.c, big-endian hosts)
	CFGSwapTxD  = 0x0001 // AR_CFG_SWTD
	CFGSwapRxD  = 0x0004 // AR_CFG_SWRD
	RegIER      = 0x0024 // AR_IER: global interrupt enable
	IEREnable   = 0x0001
	RegDataBuf  = 0x0060 // AR_DATABUF_SIZE: RX buffer size, 12 bits
	DataBufMask = 0x0fff
	RegHPRXDP   = 0x0074 // AR_HP_RXDP: a write pushes a buffer into the high-priority FIFO
	RegLPRXDP   = 0x0078 // AR_LP_RXDP: the same for the low-priority FIFO

	RegISR    = 0x0080 // AR_ISR: primary status, write 1 to clear
	RegISRS0  = 0x0084 // AR_ISR_S0..S5: secondary status, write 1 to clear
	RegISRS1  = 0x0088
	RegISRS2  = 0x008c
	RegISRS3  = 0x0090
	RegISRS4  = 0x0094
	RegISRS5  = 0x0098
	RegIMR    = 0x00a0 // AR_IMR: primary mask
	RegISRRAC = 0x00c0 // AR_ISR_RAC: read-and-clear copy of AR_ISR
	// Shadow copies of S0..S5 latched by a read of AR_ISR_RAC; on
	// AR9300 2.0 and later S2_S..S5_S moved up by 4 (reg.h).
	RegISRS0S = 0x00c4
	RegISRS1S = 0x00c8
	RegISRS2S = 0x00d0
	RegISRS3S = 0x00d4
	RegISRS4S = 0x00d8
	RegISRS5S = 0x00dc

	// AR_ISR bits (ar9300reg.h).
	ISRHPRXOK = 0x00000001
	ISRLPRXOK = 0x00000002
	ISRRXERR  = 0x00000004
	ISRRXEOL  = 0x00000010 // no receive buffer
	ISRRXORN  = 0x00000020 // receive FIFO overrun
	ISRTXOK   = 0x00000040
	ISRTXERR  = 0x00000100
	ISRSWBA   = 0x00010000
	ISRBMISS  = 0x00040000
	ISRBCNMSC = 0x00800000 // summary of AR_ISR_S2
	// AR_ISR_S0: per-QCU TXOK in bits 0..9; AR_ISR_S1 per-QCU TXERR.
	ISRS0TXOKMask = 0x000003ff

	RegQTXDP0        = 0x0800 // AR_QTXDP(q) = 0x800 + 4q: a write pushes a chain into the QCU's TX FIFO
	RegQStatusStart  = 0x0830 // AR_Q_STATUS_RING_START
	RegQStatusEnd    = 0x0834 // AR_Q_STATUS_RING_END
	RegQTXE          = 0x0840 // AR_Q_TXE: write 1<<q to start a queue
	RegQTXD          = 0x0880 // AR_Q_TXD: write 1<<q to stop (abort) a queue
	RegQSTS0         = 0x0a00 // AR_QSTS(q) = 0xa00 + 4q
	QSTSPendMask     = 0x00000003
	NumQCU           = 10 // AR_NUM_QCU
	TxFIFODepth      = 8  // ATH_TXFIFO_DEPTH (ath9k.h): chains a QCU holds
	RxLPFIFODepth    = 128
	RxHPFIFODepth    = 16 // ath9k hw.c: rx_lp_qdepth 128, rx_hp_qdepth 16
	BeaconQCU        = 9  // ath9k: the beacon queue is the last QCU
	StaID0           = 0x8000
	StaID1           = 0x8004
	RegTSFL32        = 0x804c // AR_TSF_L32
	RegTSFU32        = 0x8050 // AR_TSF_U32
	RegNextTBTT      = 0x8200 // AR_NEXT_TBTT_TIMER (µs on AR9300, ath9k_hw_beaconinit)
	RegNextDBA       = 0x8204 // AR_NEXT_DMA_BEACON_ALERT
	RegNextSWBA      = 0x8208 // AR_NEXT_SWBA
	RegBeaconPeriod  = 0x8220 // AR_BEACON_PERIOD
	RegDBAPeriod     = 0x8224 // AR_DMA_BEACON_PERIOD
	RegSWBAPeriod    = 0x8228 // AR_SWBA_PERIOD
	RegTimerMode     = 0x8240 // AR_TIMER_MODE
	TimerTBTT        = 0x00000001
	TimerDBA         = 0x00000002
	TimerSWBA        = 0x00000004
	RegKeyTable      = 0x8800 // AR_KEYTABLE(n) = 0x8800 + 32n
	KeyEntrySize     = 32
	KeySlots         = 128    // AR9300 key cache entries (ath9k: keymax 128)
	KeyTypeCCM       = 6      // AR_KEYTABLE_TYPE_CCM
	KeyValid         = 0x8000 // AR_KEYTABLE_VALID in MAC1
	RegionSize       = 0x10000
	keyOffType       = 0x14
	keyOffMAC0       = 0x18
	keyOffMAC1       = 0x1c
	VendorID         = 0x168c // ATHEROS_VENDOR_ID: the descriptor ID
	TxDescWords      = 23     // ar9003_txc without padding (ds_info length field 0x17)
	TxDescSize       = 128    // ar9003_txc padded to 32 words
	TxStatusSize     = 36     // ar9003_txs: 9 words
	RxStatusSize     = 48     // ar9003_rxs: 12 words
	infoDescLen      = 0x000000ff
	infoRxPriority   = 0x00000100
	infoQCUMask      = 0x00000f00
	infoQCUShift     = 8
	infoCtrlStat     = 0x00004000
	infoTxRxDesc     = 0x00008000
	bufLenMask       = 0x0fff0000 // ctl3/5/7/9 AR_BufLen
	bufLenShift      = 16
	descIDShift      = 16 // ctl10 AR_TxDescId
	ptrChkSumMask    = 0x0000ffff
	frameLenMask     = 0x00000fff // ctl11 AR_FrameLen
	ctl11DestIdxOK   = 0x40000000 // AR_DestIdxValid
	ctl12TxMore      = 0x00001000
	ctl12DestIdxMask = 0x000fe000
	ctl12DestIdxSh   = 13
	ctl12NoAck       = 0x01000000
	ctl12MoreAggr    = 0x20000000
	ctl12IsAggr      = 0x40000000
	ctl17EncrMask    = 0x1c000000
	ctl17EncrShift   = 26
	EncrAES          = 2 // ath9k_key_type AES
	// TX status words (ar9300desc.h).
	txsBaStatus     = 0x40000000 // status2
	txsFrmXmitOK    = 0x00000001 // status3
	txsExcessive    = 0x00000002
	txsDataFailSh   = 8
	txsDescCfgErr   = 0x00040000
	txsDone         = 0x00000001 // status8
	txsSeqShift     = 1
	txsFinalIdxSh   = 21
	txsTidShift     = 28
	rxsDone         = 0x00000001 // status11
	rxsFrameOK      = 0x00000002
	rxsDecryptCRC   = 0x00000008
	rxsKeyIdxValid  = 0x00000100
	rxsKeyIdxShift  = 9
	rxsMoreAggr     = 0x00010000
	rxsAggr         = 0x00020000
	rxsKeyMiss      = 0x80000000
	rxsRateShift    = 24 // status1 AR_RxRate
	rxsRSSIShift    = 24 // status5 AR_RxRSSICombined
	rxsDataLenMask  = 0x00000fff
	swbaLeadDefault = 0
)
