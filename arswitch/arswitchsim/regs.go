package arswitchsim

// Register facts, written independently of package arswitch so that a wrong
// constant in the driver is not silently shared by the model. Sources: the
// upstream drivers listed in package arswitch's documentation (FreeBSD
// sys/dev/etherswitch/arswitch/, OpenWrt's ar8216.c and ag71xx_ar7240.c,
// Linux's drivers/net/dsa/qca/qca8k.h).

const (
	regMaskCtrl = 0x000
	softReset   = 1 << 31

	// PORT_STATUS bits (both layouts).
	stSpeedMask = 0x3
	stTXMAC     = 1 << 2
	stRXMAC     = 1 << 3
	stTXFlow    = 1 << 4
	stRXFlow    = 1 << 5
	stDuplex    = 1 << 6
	stLinkUp    = 1 << 8
	stLinkAuto  = 1 << 9
	stFlowAuto  = 1 << 12 // AR8327
	stLive      = stSpeedMask | stTXMAC | stRXMAC | stTXFlow | stRXFlow | stDuplex | stLinkUp

	stateForward = 4
	stateLearn   = 3

	dot1qPortOnly = 0
	dot1qFallback = 1
	dot1qCheck    = 2
	dot1qSecure   = 3
)

// AR8216 family (FreeBSD arswitchreg.h AR8X16_*/AR8216_*, OpenWrt
// ag71xx_ar7240.c AR7240_*/AR934X_*).
const (
	a16OperMode0  = 0x004
	a16Mode       = 0x008
	a16FloodMask  = 0x02c
	a16GlobalCtrl = 0x030
	a16Magic      = 0x038
	a16QMCtrl     = 0x03c
	a16VTU        = 0x040
	a16VTUData    = 0x044
	a16ATU        = 0x050
	a16ATUData    = 0x054
	a16ATUCtrl2   = 0x058
	a16ATUCtrl    = 0x05c
	a16TagPrio    = 0x070
	a16CPUPort    = 0x078
	a16MIBFunc    = 0x080
	a16MDIOCtrl   = 0x098
	a16PortStatus = 0x100 // + 0x100·p
	a16PortCtrl   = 0x104
	a16PortVLAN   = 0x108
	a16PortVLAN2  = 0x10c // AR934x: member mask and 802.1Q mode
	a16Stride     = 0x100

	a16VTUActive    = 1 << 3
	a16VTUFull      = 1 << 4
	a16VTUDataValid = 1 << 11
	a16ATUActive    = 1 << 3
	a16AgeEn        = 1 << 17
	a16MIBEn        = 1 << 30
)

// AR8327 (FreeBSD arswitchreg.h AR8327_*, Linux qca8k.h).
const (
	a27ModuleEn    = 0x030
	a27MIBFunc     = 0x034
	a27MDIOCtrl    = 0x03c
	a27MaxFrame    = 0x078
	a27PortStatus  = 0x07c // + 4·p
	a27PortVLAN0   = 0x420 // + 8·p
	a27PortVLAN1   = 0x424
	a27ATUData0    = 0x600
	a27ATUData1    = 0x604
	a27ATUData2    = 0x608
	a27ATUFunc     = 0x60c
	a27VTUFunc0    = 0x610
	a27VTUFunc1    = 0x614
	a27ATUCtrl     = 0x618
	a27FwdCtrl0    = 0x620
	a27FwdCtrl1    = 0x624
	a27PortLookup  = 0x660 // + 0xc·p
	a27Busy        = 1 << 31
	a27VTUValid    = 1 << 20
	a27VTUFull     = 1 << 4
	a27LookupLearn = 1 << 20
)

// Shared encodings.
const (
	mibBusy      = 1 << 17
	mibFuncShift = 24
	mdioBusy     = 1 << 31
	mdioMasterEn = 1 << 30
	mdioRead     = 1 << 27

	opFlush        = 1
	opLoad         = 2
	opPurge        = 3
	opFlushLocked  = 4 // ATU; VTU: remove port
	opFlushUnicast = 5 // ATU; VTU: get next
	opGetNext      = 6 // ATU; VTU: get one (AR8327)
)
