package ehci

// Register map and descriptor layouts. Facts: EHCI specification rev 1.0
// (§2.2 capability registers, §2.3 operational registers, §3.5 qTD, §3.6
// qH, §3.1 periodic frame list, §4.8.2 and §4.10 schedules); Linux
// include/linux/usb/ehci_def.h and drivers/usb/host/ehci.h for the
// ChipIdea/TDI additions (USBMODE, PORTSC PSPD); FreeBSD
// sys/dev/usb/controller/ehcireg.h for the same names.

// Capability registers (EHCI §2.2), offsets from the controller's base.
const (
	regCapBase  = 0x00 // CAPLENGTH bits 7:0, HCIVERSION bits 31:16 (read as one word)
	regHCSParam = 0x04
	regHCCParam = 0x08
)

// HCSPARAMS fields (EHCI §2.2.3).
const (
	hcsNPorts = 0xf    // bits 3:0: number of root ports
	hcsPPC    = 1 << 4 // port power control: software must set PORTSC.PP
	hcsNCC    = 0xf000 // bits 15:12: number of companion controllers
	hcsNCCPos = 12
)

// HCCPARAMS fields (EHCI §2.2.4).
const (
	hcc64Bit = 1 << 0 // 64-bit addressing: CTRLDSSEGMENT exists
)

// Operational registers (EHCI §2.3), offsets from CAPLENGTH.
const (
	regUSBCmd      = 0x00
	regUSBSts      = 0x04
	regUSBIntr     = 0x08
	regFrIndex     = 0x0c
	regCtrlDSSeg   = 0x10
	regPeriodic    = 0x14 // PERIODICLISTBASE, 4 KiB aligned
	regAsync       = 0x18 // ASYNCLISTADDR, 32-byte aligned
	regConfigFlag  = 0x40
	regPortSC      = 0x44 // PORTSC(n) = regPortSC + 4*(n-1)
	regTDIUSBMode  = 0x68 // ChipIdea/TDI only (Linux ehci.h USBMODE)
	frIndexPerTick = 8    // FRINDEX counts microframes; bit 3 upwards is the frame
)

// USBCMD bits (EHCI §2.3.1).
const (
	cmdRun      = 1 << 0
	cmdHCReset  = 1 << 1
	cmdFLSMask  = 3 << 2 // frame list size: 0 = 1024 entries
	cmdPSE      = 1 << 4 // periodic schedule enable
	cmdASE      = 1 << 5 // asynchronous schedule enable
	cmdIAAD     = 1 << 6 // interrupt on async advance doorbell
	cmdITCShift = 16     // interrupt threshold, microframes (1 = every microframe)
)

// USBSTS bits (EHCI §2.3.2). Bits 5:0 are write-one-to-clear and are also
// the USBINTR enables (§2.3.3).
const (
	stsInt       = 1 << 0 // USBINT: a qTD with IOC retired, or a short packet
	stsErr       = 1 << 1 // USBERRINT: a transaction ended in an error (halt)
	stsPCD       = 1 << 2 // port change detect
	stsFLR       = 1 << 3 // frame list rollover
	stsHSE       = 1 << 4 // host system error (DMA failure): the controller halts
	stsIAA       = 1 << 5 // interrupt on async advance
	stsAck       = 0x3f
	stsHalted    = 1 << 12
	stsPSS       = 1 << 14 // periodic schedule status
	stsASS       = 1 << 15 // asynchronous schedule status
	intrEnabled  = stsInt | stsErr | stsPCD | stsHSE | stsIAA
	configFlagOn = 1 // CONFIGFLAG: route every port to this controller
)

// PORTSC bits (EHCI §2.3.9; PSPD from ChipIdea/TDI, Linux ehci_port_speed).
const (
	portCCS      = 1 << 0  // current connect status
	portCSC      = 1 << 1  // connect status change (W1C)
	portPE       = 1 << 2  // port enabled
	portPEC      = 1 << 3  // port enable change (W1C)
	portOCA      = 1 << 4  // over-current active
	portOCC      = 1 << 5  // over-current change (W1C)
	portFPR      = 1 << 6  // force port resume
	portSuspend  = 1 << 7  // suspended
	portReset    = 1 << 8  // port reset
	portLSMask   = 3 << 10 // line status, valid while not enabled
	portLSK      = 1 << 10 // line status K-state: a low-speed device
	portPP       = 1 << 12 // port power
	portOwner    = 1 << 13 // port owner: 1 = the companion controller
	portRWC      = portCSC | portPEC | portOCC
	portPSPDPos  = 26 // TDI: port speed bits 27:26, 0 full, 1 low, 2 high
	portPSPDMask = 3
)

// USBMODE of a ChipIdea/TDI core (Linux ehci.h): controller mode bits 1:0
// (3 = host) and ES bit 2, big-endian register and descriptor access.
const (
	usbModeHost = 3
	usbModeBE   = 1 << 2
)

// Link pointers (EHCI §3.1, §3.6.1): a 32-byte aligned address, the type
// in bits 2:1 and T (terminate) in bit 0.
const (
	linkTerminate = 1 << 0
	linkTypeQH    = 1 << 1 // Typ = 01b
)

// Queue head layout (EHCI §3.6), 48 bytes used of the 64 each takes.
const (
	qhHLink   = 0x00 // horizontal link pointer
	qhChar    = 0x04 // endpoint characteristics
	qhCaps    = 0x08 // endpoint capabilities
	qhCurrent = 0x0c // current qTD pointer (written by the controller)
	qhOverlay = 0x10 // transfer overlay: a qTD's first 8 words
	qhSize    = 64
)

// Endpoint characteristics (qH word 1, EHCI §3.6.2).
const (
	qhAddrMask  = 0x7f
	qhEndptPos  = 8
	qhEPSPos    = 12 // endpoint speed: 0 full, 1 low, 2 high
	qhDTC       = 1 << 14
	qhHead      = 1 << 15 // H: head of the reclamation list
	qhMaxPPos   = 16
	qhCtrlEP    = 1 << 27 // C: a full/low-speed control endpoint
	qhNakRLPos  = 28      // NAK count reload
	qhNakReload = 4
	epsFull     = 0
	epsLow      = 1
	epsHigh     = 2
)

// Endpoint capabilities (qH word 2, EHCI §3.6.2).
const (
	qhSMaskPos   = 0
	qhCMaskPos   = 8
	qhHubPos     = 16
	qhPortPos    = 23
	qhMultPos    = 30
	splitCMask   = 0x1c // complete-split in microframes 2..4 (Linux ehci-sched.c default)
	qhMultOne    = 1    // one transaction per microframe
	periodicSMax = 0xff // poll in every microframe
)

// qTD layout (EHCI §3.5), 32 bytes, 32-byte aligned.
const (
	tdNext   = 0x00
	tdAlt    = 0x04
	tdToken  = 0x08
	tdBuf0   = 0x0c // buffer pointer 0..4 at 0x0c + 4*i
	tdSize   = 32
	tdPages  = 5
	pageSize = 4096
)

// qTD token (EHCI §3.5.3).
const (
	tokPing     = 1 << 0
	tokSplitX   = 1 << 1
	tokMissedMF = 1 << 2
	tokXactErr  = 1 << 3
	tokBabble   = 1 << 4
	tokBufErr   = 1 << 5
	tokHalted   = 1 << 6
	tokActive   = 1 << 7
	tokPIDPos   = 8
	pidOut      = 0
	pidIn       = 1
	pidSetup    = 2
	tokCErrPos  = 10
	tokCErr3    = 3 << tokCErrPos // three retries before a transaction error halts
	tokCPagePos = 12
	tokIOC      = 1 << 15
	tokBytesPos = 16
	tokBytesMax = 0x7fff // 5 pages (20480) fit in the 15-bit field
	tokDT       = 1 << 31
	tokStatus   = 0xff
)

// Periodic frame list (EHCI §3.1): 1024 link pointers, 4 KiB aligned.
const (
	frameListLen   = 1024
	frameListAlign = 4096
	maxPeriod      = 256 // longest polling period in frames kept in the schedule
)
