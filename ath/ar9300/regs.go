package ar9300

// Register offsets and bits, and descriptor layouts. Facts from Linux
// drivers/net/wireless/ath/ath9k (reg.h, mac.h, ar9003_mac.h,
// ar9003_mac.c, hw.c, key.c in drivers/net/wireless/ath/key.c), QCA's
// open ath_hal ar9300 (ar9300reg.h, ar9300desc.h) and FreeBSD
// sys/dev/ath/ath_hal/ar5416/ar5416reg.h for the registers the family
// shares.
const (
	regCR      = 0x0008 // AR_CR; ar9003_hw_rx_enable writes 0 to receive
	crRXD      = 0x0020 // AR_CR_RXD
	regCFG     = 0x0014 // AR_CFG
	cfgSwapTxD = 0x0001 // AR_CFG_SWTD: descriptors in big-endian (ath9k hw.c on __BIG_ENDIAN)
	cfgSwapRxD = 0x0004 // AR_CFG_SWRD
	regIER     = 0x0024 // AR_IER
	ierEnable  = 0x0001
	regDataBuf = 0x0060 // AR_DATABUF_SIZE (12 bits)
	regHPRXDP  = 0x0074 // AR_HP_RXDP: each write queues one buffer
	regLPRXDP  = 0x0078 // AR_LP_RXDP

	regISR   = 0x0080 // AR_ISR: write 1 to clear (ar9003_hw_get_isr without RAC)
	regISRS0 = 0x0084 // AR_ISR_S0: per-QCU TXOK/TXDESC, write 1 to clear
	regISRS1 = 0x0088 // AR_ISR_S1: per-QCU TXERR/TXEOL
	regISRS2 = 0x008c // AR_ISR_S2: beacon-miscellaneous causes
	regIMR   = 0x00a0 // AR_IMR

	isrHPRXOK  = 0x00000001 // AR_ISR_HP_RXOK
	isrLPRXOK  = 0x00000002 // AR_ISR_LP_RXOK
	isrRXERR   = 0x00000004
	isrRXEOL   = 0x00000010
	isrRXORN   = 0x00000020
	isrTXOK    = 0x00000040
	isrTXERR   = 0x00000100
	isrTXEOL   = 0x00000400
	isrSWBA    = 0x00010000
	isrBMISS   = 0x00040000
	isrBCNMISC = 0x00800000
	deadRead   = 0xdeadbeef // what a sleeping MAC answers (FreeBSD ath_hal, ath/athsim)

	regQTXDP0       = 0x0800 // AR_QTXDP(q) = 0x800 + 4q
	regQStatusStart = 0x0830 // AR_Q_STATUS_RING_START
	regQStatusEnd   = 0x0834 // AR_Q_STATUS_RING_END
	regQTXE         = 0x0840 // AR_Q_TXE
	regQTXD         = 0x0880 // AR_Q_TXD
	regQSTS0        = 0x0a00 // AR_QSTS(q) = 0xa00 + 4q
	qstsPendMask    = 0x00000003

	regStaID0      = 0x8000 // AR_STA_ID0: MAC address bytes 0..3
	regStaID1      = 0x8004 // AR_STA_ID1: bytes 4..5 and mode bits
	staID1AP       = 0x00010000
	regBSSID0      = 0x8008
	regBSSID1      = 0x800c
	regTSFL32      = 0x804c
	regTSFU32      = 0x8050
	regNextTBTT    = 0x8200 // AR_NEXT_TBTT_TIMER (µs on AR9300: ath9k_hw_beaconinit)
	regNextDBA     = 0x8204 // AR_NEXT_DMA_BEACON_ALERT
	regNextSWBA    = 0x8208 // AR_NEXT_SWBA
	regBeaconPer   = 0x8220 // AR_BEACON_PERIOD
	regDBAPer      = 0x8224 // AR_DMA_BEACON_PERIOD
	regSWBAPer     = 0x8228 // AR_SWBA_PERIOD
	regTimerMode   = 0x8240 // AR_TIMER_MODE
	timerTBTT      = 0x00000001
	timerDBA       = 0x00000002
	timerSWBA      = 0x00000004
	regKeyTable    = 0x8800 // AR_KEYTABLE(n) = 0x8800 + 32n
	keyEntrySize   = 32
	keyTypeCCM     = 6 // AR_KEYTABLE_TYPE_CCM
	keyTypeClear   = 7 // AR_KEYTABLE_TYPE_CLR
	keyValid       = 0x8000
	keyOffType     = 0x14
	keyOffMAC0     = 0x18
	keyOffMAC1     = 0x1c
	keySlots       = 128 // AR9300 key cache entries
	groupKeySlots  = 4   // slots 0..3 are the group keys by key ID (ath9k key.c)
	numQCU         = 10
	beaconQCU      = 9 // ath9k: the beacon queue is the last QCU
	txFIFODepth    = 8 // ATH_TXFIFO_DEPTH (ath9k.h): chains per QCU FIFO
	rxLPFIFODepth  = 128
	rxHPFIFODepth  = 16 // ath9k hw.c: rx_lp_qdepth, rx_hp_qdepth
	dmaBeaconRespT = 1  // TU: DBA before TBTT (ath9k hw.c dma_beacon_response_time)
	swBeaconRespT  = 6  // TU: SWBA before TBTT (sw_beacon_response_time)
	tuMicros       = 1024

	vendorID      = 0x168c // ATHEROS_VENDOR_ID, the descriptor ID
	txDescWords   = 23     // ar9003_txc: ds_info length field 0x17
	txDescSize    = 128    // ar9003_txc padded to 32 words (one cache line of 128 B)
	txStatusSize  = 36     // ar9003_txs: 9 words
	txStatusWords = 9
	rxStatusSize  = 48 // ar9003_rxs: 12 words at the start of each buffer
	fcsLen        = 4

	infoQCUShift  = 8          // AR_TxQcuNum
	infoQCUMask   = 0x00000f00 //
	infoCtrlStat  = 0x00004000 // AR_CtrlStat
	infoTxRxDesc  = 0x00008000 // AR_TxRxDesc
	infoDescIDSh  = 16         // AR_DescId
	bufLenShift   = 16         // ctl3/5/7/9 AR_BufLen 0x0fff0000
	bufLenMax     = 0x0fff
	descIDShift   = 16 // ctl10 AR_TxDescId
	ctl11DestIdx  = 0x40000000
	ctl11IntrReq  = 0x20000000
	ctl11RTS      = 0x00400000
	ctl11ClrDest  = 0x01000000
	ctl12TxMore   = 0x00001000
	ctl12DestSh   = 13 // AR_DestIdx 0x000fe000
	ctl12TypeSh   = 20 // AR_FrameType
	ctl12NoAck    = 0x01000000
	ctl12MoreAggr = 0x20000000
	ctl12IsAggr   = 0x40000000
	ctl13TriesSh  = 16 // AR_XmitDataTries0, 4 bits per series
	ctl17PadSh    = 18 // AR_PadDelim
	ctl17EncrSh   = 26 // AR_EncrType
	ctl19NotSound = 0x20000000
	encrAES       = 2 // ath9k_key_type: AES-CCM
	frameTypeBcn  = 3 // ath9k_pkt_type BEACON
)
