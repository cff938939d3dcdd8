package arswitch

// Register map of the supported switches. Offsets and bit positions are
// from FreeBSD's arswitchreg.h [FB-REG], OpenWrt's ar8216.c [OW-8216] and
// ag71xx_ar7240.c [OW-7240], and Linux's qca8k.h [LX-QCA8K] (the tags are
// listed in the package documentation). Only facts are used; the names are
// this package's own.

// MDIO paging ([FB-RIO] arswitch_split_setpage, [OW-8216] split_addr,
// [LX-QCA8K] qca8k_split_addr).
const (
	pagePHYExternal = 0x18 // AR8216/8316/8327: page written to PHY 0x18 reg 0 [FB-RIO]
	pageRegExternal = 0x00
	// AR7240/AR934x built-in switch: PHY 0x1f reg 0x10 [OW-7240]. FreeBSD
	// ([FB-RIO]) uses 0x18/0 for these too; whether the built-in switch
	// decodes both is uncertain, so we follow OpenWrt.
	pagePHYBuiltIn = 0x1f
	pageRegBuiltIn = 0x10
	regPHYBase     = 0x10 // register windows answer at PHY 0x10-0x17
)

// Registers common to every chip: MASK_CTRL ([FB-REG], [LX-QCA8K]).
const (
	regMaskCtrl       = 0x000
	maskCtrlSoftReset = 1 << 31
	maskCtrlVerShift  = 8
	maskCtrlVerMask   = 0xff
	maskCtrlRevMask   = 0xff
)

// PORT_STATUS bits, identical on both register layouts ([FB-REG], [LX-QCA8K];
// [OW-8216] ar8216_read_port_link maps them to link state).
const (
	portStatusSpeedMask = 0x3 // 0 = 10, 1 = 100, 2 = 1000 Mbit/s
	portStatusSpeed10   = 0
	portStatusSpeed100  = 1
	portStatusSpeed1000 = 2
	portStatusTXMAC     = 1 << 2
	portStatusRXMAC     = 1 << 3
	portStatusTXFlow    = 1 << 4
	portStatusRXFlow    = 1 << 5
	portStatusDuplex    = 1 << 6 // set = full duplex ([FB-SW] arswitch_update_ifmedia reads it inverted: a FreeBSD bug)
	portStatusLinkUp    = 1 << 8
	portStatusLinkAuto  = 1 << 9
	portStatusLinkPause = 1 << 10
	portStatusFlowAuto  = 1 << 12 // AR8327 only
)

// Port states (PORT_CTRL bits 2:0 on AR8216 family, PORT_LOOKUP 18:16 on AR8327).
const (
	portStateDisabled = 0
	portStateBlock    = 1
	portStateListen   = 2
	portStateLearn    = 3
	portStateForward  = 4
)

// Ingress 802.1Q modes (PORT_VLAN 31:30 on AR8216 family, PORT_LOOKUP 9:8 on AR8327).
const (
	dot1qPortOnly = 0 // classify by port only, VTU not consulted
	dot1qFallback = 1 // VTU lookup, port-based on miss
	dot1qCheck    = 2 // VID must be in the VTU
	dot1qSecure   = 3 // VID must be in the VTU and the ingress port a member
)

// AR8216 / AR8236 / AR8316 / AR7240 / AR934x layout ([FB-REG]; the AR7240 and
// AR934x registers and bits from [OW-7240] and [FB-9340]).
const (
	r16OperMode0       = 0x004 // AR934x only
	operMode0MACGMIIEn = 1 << 6
	operMode0PHYMIIEn  = 1 << 10

	r16Mode            = 0x008      // AR8316 MODE / AR934x OPER_MODE1
	mode8316RGMIIPort4 = 0x81461bea // RGMII to CPU, PHY4 on the CPU's second MAC [FB-8316]
	mode8316RGMII      = 0x01261be2 // RGMII to CPU, PHY4 in the switch
	mode8316GMII       = 0x010e5b71
	operMode1PHY4MIIEn = 1 << 28

	r16FloodMask         = 0x02c
	floodUnicastShift    = 0  // unknown-unicast flood ports
	floodMulticastShift  = 16 // multicast flood ports
	flood934xBcastShift  = 25 // AR934x broadcast flood ports
	flood8216BcastToCPU  = 1 << 26
	flood8316Init        = 0x003f003f // [FB-8316], [OW-8216]
	r16GlobalCtrl        = 0x030
	globalCtrlMTU8216    = 0x0fff // bits 11:0 on AR8216 and AR7240
	globalCtrlMTU8316    = 0x7fff // bits 14:0 on AR8236/AR8316
	globalCtrlMTU934x    = 0x3fff // 14 bits on AR934x
	globalCtrlMTU7240    = 0x7ff  // AR7240: 11 bits ([OW-7240] AR7240_GLOBAL_CTRL_MTU_M)
	r16Magic             = 0x038
	magic8316Init        = 0xc000050e // [FB-8316], [OW-8216]
	r16QMCtrl            = 0x03c      // AR934x
	qmCtrlARPEn          = 1 << 15
	r16VTU               = 0x040
	vtuOpMask            = 0x7
	vtuOpFlush           = 1
	vtuOpLoad            = 2
	vtuOpPurge           = 3
	vtuOpGetNext         = 5
	vtuActive            = 1 << 3
	vtuFull              = 1 << 4
	vtuVIDShift          = 16
	r16VTUData           = 0x044
	vtuDataValid         = 1 << 11
	r16ATU               = 0x050
	atuOpMask            = 0x7
	atuOpFlush           = 1
	atuOpLoad            = 2
	atuOpPurge           = 3
	atuOpFlushUnicast    = 5 // per port
	atuOpGetNext         = 6
	atuActive            = 1 << 3
	atuPortShift         = 8
	atuAddr5Shift        = 16
	atuAddr4Shift        = 24
	r16ATUData           = 0x054 // MAC bytes 0..3, byte 0 in bits 31:24 (FB-REG ADDR0..ADDR3)
	r16ATUCtrl2          = 0x058
	atuCtrl2PortsMask    = 0x3f // destination port bitmap: 6 ports as OpenWrt's AR8216_ATU_PORTS; [FB-REG] has bits 4:0, uncertain
	atuCtrl2StatusShift  = 16
	atuCtrl2StatusMask   = 0xf
	atuStatusStatic      = 0xf
	r16ATUCtrl           = 0x05c
	atuCtrlAgeTimeMask   = 0xffff
	atuCtrlAge5Min       = 0x2b // ≈ 5 minutes [FB-SW]
	atuCtrlAgeEn         = 1 << 17
	atuCtrlLearnChange   = 1 << 18
	atuCtrlRsvd19        = 1 << 19 // set by the AR7240 init [OW-7240]
	atuCtrlARPEn         = 1 << 20
	r16TagPrio           = 0x070
	tagPrio7240Init      = 0xfa50 // [FB-7240], [FB-9340]
	r16CPUPort           = 0x078
	cpuPortMirrorShift   = 4
	cpuPortMirrorMask    = 0xf << cpuPortMirrorShift
	cpuPortMirrorOff     = 0xf << cpuPortMirrorShift
	cpuPortEn            = 1 << 8
	r16MIBFunc           = 0x080
	mibFuncBusy          = 1 << 17
	mibFuncShift         = 24
	mibFuncMask          = 0x7 << mibFuncShift
	mibFuncFlush         = 1
	mibFuncCapture       = 3
	mibFuncEn934x        = 1 << 30 // AR934x / AR8236 family MIB enable
	r16MDIOCtrl          = 0x098
	r16PortStatusBase    = 0x100
	r16PortCtrlBase      = 0x104
	r16PortVLANBase      = 0x108
	r16PortVLAN2Base     = 0x10c // AR934x: member mask 16+, 802.1Q mode 31:30
	r16PortStride        = 0x100
	portCtrlStateMask    = 0x7
	portCtrlLearnLock    = 1 << 7
	portCtrlEgressShift  = 8
	portCtrlEgressMask   = 0x3 << portCtrlEgressShift
	portCtrlHeader       = 1 << 11
	portCtrlLearn        = 1 << 14
	egressKeep           = 0
	egressStrip          = 1
	egressAdd            = 2
	portVLANPVIDMask     = 0xfff
	portVLANDestShift    = 16
	portVLANModeShift    = 30
	portVLANModeMask     = 0x3 << portVLANModeShift
	r16MIBBase           = 0x20000 // per-port MIB block, stride 0x100 ([FB-REG], [OW-7240]; see mib.go)
	r16MIBStride         = 0x100
	r16MaxVTUEntries     = 16 // VTU entries in FreeBSD's model of these chips
	r16ATUEntries        = 1024
	r16PortsMask6        = 0x3f
	mtu8216              = 1518 + 8 + 2
	mtuJumbo             = 9018 + 8 + 2
	mtu934x              = 1536
	maxPortsAR8216Family = 6
)

// AR8327 / AR8337 layout ([FB-REG] AR8327_REG_*, [LX-QCA8K], [FB-8327]).
const (
	r27Pad0Mode       = 0x004
	r27Pad5Mode       = 0x008
	r27Pad6Mode       = 0x00c
	padRGMIIEn        = 1 << 26
	padTXDelayEn      = 1 << 25
	padRXDelayEn      = 1 << 24
	padTXDelayShift   = 22
	padRXDelayShift   = 20
	padSGMIIEn        = 1 << 7
	r27PowerOnStrip   = 0x010
	pwsLEDOpenEn      = 1 << 24
	r27ModuleEn       = 0x030
	moduleEnMIB       = 1 << 0
	r27MIBFunc        = 0x034
	r27MDIOCtrl       = 0x03c
	r27LEDCtrl0       = 0x050
	r27MaxFrame       = 0x078
	maxFrameMask      = 0x3fff
	r27PortStatusBase = 0x07c // + 4·p
	r27PortHeaderBase = 0x09c // + 4·p
	r27SGMIICtrl      = 0x0e0
	sgmiiEnPLL        = 1 << 1
	sgmiiEnRX         = 1 << 2
	sgmiiEnTX         = 1 << 3
	r27EEECtrl        = 0x100
	r27PortVLAN0Base  = 0x420 // + 8·p: SVID 11:0, CVID 27:16
	r27PortVLAN1Base  = 0x424 // + 8·p
	pv1OutShift       = 12
	pv1OutMask        = 0x3 << pv1OutShift
	pv1OutUnmodified  = 0 // let the VTU's per-port mode decide
	pv1OutUntouched   = 3 // leave frames as received
	pv0CVIDShift      = 16
	r27ATUData0       = 0x600
	r27ATUData1       = 0x604
	atu27PortsShift   = 16
	atu27PortsMask    = 0x7f
	r27ATUData2       = 0x608
	atu27StatusMask   = 0xf
	atu27VIDShift     = 8
	r27ATUFunc        = 0x60c
	atu27OpMask       = 0xf
	atu27PortShift    = 8
	atu27Busy         = 1 << 31
	r27VTUFunc0       = 0x610
	vtu27ModeShift    = 4 // + 2·p
	vtu27Unmodified   = 0
	vtu27Untag        = 1
	vtu27Tag          = 2
	vtu27NotMember    = 3
	vtu27IVL          = 1 << 19
	vtu27Valid        = 1 << 20
	r27VTUFunc1       = 0x614
	vtu27Full         = 1 << 4
	vtu27OpGetNext    = 5
	vtu27Busy         = 1 << 31
	r27ATUCtrl        = 0x618
	r27FwdCtrl0       = 0x620
	fwd0CPUPortEn     = 1 << 10
	fwd0MirrorOff     = 0xf << 4
	r27FwdCtrl1       = 0x624
	fwd1UCShift       = 0
	fwd1MCShift       = 8
	fwd1BCShift       = 16
	r27PortLookupBase = 0x660 // + 0xc·p
	lookupMemberMask  = 0x7f
	lookupDot1qShift  = 8
	lookupDot1qMask   = 0x3 << lookupDot1qShift
	lookupStateShift  = 16
	lookupStateMask   = 0x7 << lookupStateShift
	lookupLearn       = 1 << 20
	r27MIBBase        = 0x1000
	r27MIBStride      = 0x100
	r27Ports          = 7
	r27ATUEntries     = 2048
)

// MDIO master (PHY access through the switch), 0x98 on AR8216 family,
// 0x3c on AR8327, same layout ([FB-PHY], [OW-7240] ar7240sw_phy_read,
// [LX-QCA8K]). PHY debug and MMD registers: [FB-RIO] arswitch_writedbg,
// arswitch_writemmd.
const (
	mdioBusy        = 1 << 31
	mdioMasterEn    = 1 << 30
	mdioRead        = 1 << 27
	mdioPHYShift    = 21
	mdioRegShift    = 16
	mdioDataMask    = 0xffff
	phyDebugAddr    = 0x1d
	phyDebugData    = 0x1e
	phyMMDCtrl      = 0x0d
	phyMMDData      = 0x0e
	phyMMDDataNoInc = 0x4000
)
