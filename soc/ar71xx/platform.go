package ar71xx

// What the kernel's platform hooks do on this family (the contract is in
// package kernel, kernel/platform_mipsx.go): the console on the UART, the
// CPU interrupt pins and the MISC controller as the root interrupt
// controller, the Count rate from the PLL registers, reset through the
// reset controller, RAM size by address aliasing.
//
// The code is generic over Phys, the register access, so that the same
// functions run on bare metal (soc/ar71xx/baremetal instantiates them
// with constant kseg1 addresses and binds them to the kernel's hooks)
// and against the ar71xxsim models in tests (ar71xxsim.Phys). The hooks
// run in trap context and before the data segment is mapped: this code
// uses only its arguments, constants and the registers, never a package
// variable (Identify's tables are variables; FamilyOf is the trap-safe
// equivalent), never allocates or panics, and bounds every poll loop. The
// per-SoC differences are decided from REV_ID on each call, a register
// read, since there is nowhere else to keep them.

// Phys is the register access of the platform code: 32-bit loads and
// stores by physical address, and a barrier that makes the stores before
// it reach their registers before any access after it (SYNC on MIPS).
// Registers are native-endian words (the family is big-endian).
type Phys interface {
	Read32(pa uint32) uint32
	Write32(pa, v uint32)
	Barrier()
}

// The root interrupt controller the kernel sees: the MISC controller's 32
// lines as lines 0-31 (so MiscUART is line 3), then the CPU's hardware
// interrupt pins IP2-IP5 (PCI/WMAC, USB, GE0, GE1) as lines 32-35. IP6 is
// the MISC controller's summary and IP7 the CP0 timer, neither a line.
const (
	IntrLines   = MiscLines + 4
	LineIP2     = MiscLines // line of CPU pin IP2; IP2+n is LineIP2+n
	pinMisc     = 2 + CPUIRQMisc
	RootPins    = 0x7C // IP2-IP6, bit n = IPn
	uartTimeout = 1 << 16
	ramProbe    = 64 // words compared by RAMSize
)

// FamilyOf returns the family of the chip whose REV_ID reads rev, or 0 if
// it is not one of this family's. It is Identify without tables, for the
// platform code.
//
//go:nosplit
func FamilyOf(rev uint32) Family {
	switch rev & RevMajorMask {
	case RevMajor71xx:
		return AR71xx
	case RevMajor913x:
		return AR913x
	case RevMajor7240, RevMajor7241, RevMajor7242:
		return AR724x
	case RevMajor9330, RevMajor9331:
		return AR933x
	case RevMajor9341, RevMajor9342, RevMajor9344:
		return AR934x
	case RevMajor9556, RevMajor9558:
		return QCA955x
	}
	return 0
}

// ChipName returns the chip's name as Identify does, "unknown" for a
// REV_ID of another family.
//
//go:nosplit
func ChipName(rev uint32) string {
	switch rev & RevMajorMask {
	case RevMajor71xx:
		switch rev & RevMinorMask {
		case 0:
			return "AR7130"
		case 1:
			return "AR7141"
		case 2:
			return "AR7161"
		}
	case RevMajor913x:
		return "AR913x"
	case RevMajor7240:
		return "AR7240"
	case RevMajor7241:
		return "AR7241"
	case RevMajor7242:
		return "AR7242"
	case RevMajor9330:
		return "AR9330"
	case RevMajor9331:
		return "AR9331"
	case RevMajor9341:
		return "AR9341"
	case RevMajor9342:
		return "AR9342"
	case RevMajor9344:
		return "AR9344"
	case RevMajor9556:
		return "QCA9556"
	case RevMajor9558:
		return "QCA9558"
	}
	return "unknown"
}

//go:nosplit
func family[P Phys](p P) Family { return FamilyOf(p.Read32(PhysReset + RstRevID)) }

// miscLatches reports whether the MISC status bits latch until acked
// (Info.MiscAck is AckClearBit).
//
//go:nosplit
func miscLatches(f Family) bool { return f == AR724x || f == AR933x || f == AR934x || f == QCA955x }

// resetModule returns the RESET_MODULE offset (Info.ResetModule), 0 for an
// unknown chip.
//
//go:nosplit
func resetModule(f Family) uint32 {
	switch f {
	case AR71xx:
		return RstModuleAR71xx
	case 0:
		return 0
	}
	return RstModuleOther
}

// ConsolePutc sends c on the console UART, waiting (bounded) for the
// transmitter: the 16550's THRE, or the AR933x UART's TX_CSR.
//
//go:nosplit
func ConsolePutc[P Phys](p P, c byte) {
	if family(p) == AR933x {
		for i := 0; i < uartTimeout && !txReady(p, PhysUART+UART933xData, UART933xDataTXCSR); i++ {
		}
		p.Write32(PhysUART+UART933xData, uint32(c)|UART933xDataTXCSR)
		p.Barrier()
		return
	}
	for i := 0; i < uartTimeout && !txReady(p, PhysUART+UARTLSR, UARTLSRTHRE); i++ {
	}
	p.Write32(PhysUART+UARTRBR, uint32(c))
	p.Barrier()
}

//go:nosplit
func txReady[P Phys](p P, reg, bit uint32) bool {
	p.Barrier()
	return p.Read32(reg)&bit != 0
}

// ConsoleGetc returns a byte the console UART received, or -1. On the
// AR933x UART it also pops the byte and clears the RX_VALID interrupt.
// Each status read follows a barrier: without one, a re-read may return
// the previous value (the AR934x MDIO failure), and reading the receive
// buffer has a side effect, so a stale status would pop a byte twice.
//
//go:nosplit
func ConsoleGetc[P Phys](p P) int {
	if family(p) == AR933x {
		p.Barrier()
		v := p.Read32(PhysUART + UART933xData)
		if v&UART933xDataRXCSR == 0 {
			return -1
		}
		p.Write32(PhysUART+UART933xData, UART933xDataRXCSR)
		p.Barrier() // popped before RX_VALID is cleared, or it latches again
		p.Write32(PhysUART+UART933xInt, UART933xIntRXValid)
		p.Barrier()
		return int(v & 0xFF)
	}
	p.Barrier()
	if p.Read32(PhysUART+UARTLSR)&UARTLSRDR == 0 {
		return -1
	}
	p.Barrier()
	return int(p.Read32(PhysUART+UARTRBR) & 0xFF)
}

// ConsoleEnableRX turns on the console UART's received-data interrupt
// (MISC line MiscUART).
//
//go:nosplit
func ConsoleEnableRX[P Phys](p P) {
	if family(p) == AR933x {
		p.Write32(PhysUART+UART933xIntEn, UART933xIntRXValid)
		p.Write32(PhysUART+UART933xCS, p.Read32(PhysUART+UART933xCS)|UART933xCSHostIntEn)
	} else {
		p.Write32(PhysUART+UARTIER, UARTIERRDA)
	}
	p.Barrier()
}

// IntrInit masks every MISC line and clears latched status, as NewMisc
// does. The CPU pins are masked in CP0 Status, which is the kernel's.
//
//go:nosplit
func IntrInit[P Phys](p P) {
	p.Write32(PhysReset+RstMiscIntMask, 0)
	p.Write32(PhysReset+RstMiscIntStatus, 0)
	p.Barrier()
	p.Read32(PhysReset + RstMiscIntStatus)
}

// IntrPoll returns the next pending line given the root controller's
// pending CPU pins, or -1: a CPU pin line first (IP2 to IP5), then the
// lowest pending unmasked MISC line if IP6 is pending (Linux
// ath79_misc_irq_handler: STATUS & MASK). The lines are level: nothing
// needs claiming.
//
//go:nosplit
func IntrPoll[P Phys](p P, pins uint32) int {
	for n := 0; n < 4; n++ {
		if pins&(1<<uint(2+n)) != 0 {
			return LineIP2 + n
		}
	}
	if pins&(1<<pinMisc) == 0 {
		return -1
	}
	p.Barrier()
	pend := p.Read32(PhysReset+RstMiscIntStatus) & p.Read32(PhysReset+RstMiscIntMask)
	for l := 0; l < MiscLines; l++ {
		if pend&(1<<uint(l)) != 0 {
			return l
		}
	}
	return -1
}

// IntrMask masks line and returns the CPU pin the kernel must mask for
// it: a MISC line is masked in MASK (read-modify-write, read back so it
// has taken effect, as MiscController.Mask); a CPU pin line only in
// Status.
//
//go:nosplit
func IntrMask[P Phys](p P, line int) uint32 {
	if line >= LineIP2 {
		return cpuPin(line)
	}
	if line < 0 {
		return 0
	}
	p.Barrier()
	p.Write32(PhysReset+RstMiscIntMask, p.Read32(PhysReset+RstMiscIntMask)&^(1<<uint(line)))
	p.Barrier()
	p.Read32(PhysReset + RstMiscIntMask)
	return 0
}

// IntrUnmask unmasks line and returns the CPU pin the kernel must unmask.
//
//go:nosplit
func IntrUnmask[P Phys](p P, line int) uint32 {
	if line >= LineIP2 {
		return cpuPin(line)
	}
	if line < 0 {
		return 0
	}
	p.Barrier()
	p.Write32(PhysReset+RstMiscIntMask, p.Read32(PhysReset+RstMiscIntMask)|1<<uint(line))
	p.Barrier()
	p.Read32(PhysReset + RstMiscIntMask)
	return 0
}

//go:nosplit
func cpuPin(line int) uint32 {
	if line < LineIP2 || line >= IntrLines {
		return 0
	}
	return 1 << uint(2+line-LineIP2)
}

// IntrEOI acknowledges a MISC line where the status latches (AR724x and
// later): read STATUS, write it back with only this line's bit cleared,
// read it again, the sequence MiscController.Ack uses and documents. A
// bit whose source is still asserted latches again at once, so an ack
// while the device still asserts is harmless, and an ack of a line not
// pending changes nothing. AR71xx/AR913x status follows the source: no
// ack. CPU pin lines need none either.
//
//go:nosplit
func IntrEOI[P Phys](p P, line int) {
	if line < 0 || line >= MiscLines || !miscLatches(family(p)) {
		return
	}
	p.Barrier()
	v := p.Read32(PhysReset + RstMiscIntStatus)
	p.Write32(PhysReset+RstMiscIntStatus, v&^(1<<uint(line)))
	p.Barrier()
	p.Read32(PhysReset + RstMiscIntStatus)
}

// IntrPending returns the raw request bits: MISC STATUS as lines 0-31,
// the pending CPU pins IP2-IP5 as lines 32-35.
//
//go:nosplit
func IntrPending[P Phys](p P, pins uint32) uint64 {
	p.Barrier()
	return uint64(p.Read32(PhysReset+RstMiscIntStatus)) | uint64(pins>>2&0xF)<<LineIP2
}

// ChipReset resets the whole chip through RESET_MODULE's FULL_CHIP bit,
// like pulling the reset pin (Linux ath79_restart; the register is at
// 0x24 on AR71xx and 0x1C after). On an unknown chip it does nothing.
//
//go:nosplit
func ChipReset[P Phys](p P) {
	off := resetModule(family(p))
	if off == 0 {
		return
	}
	p.Barrier()
	p.Write32(PhysReset+off, p.Read32(PhysReset+off)|ResetFull)
	p.Barrier()
	// The reset takes effect at once on hardware; give it time.
	for i := 0; i < uartTimeout; i++ {
		p.Read32(PhysReset + RstRevID)
	}
}

// CountHz returns the CP0 Count rate: half the CPU clock.
//
//go:nosplit
func CountHz[P Phys](p P) uint32 { return CPUHz(p) / 2 }

// CPUHz computes the CPU clock from the PLL registers (and, on AR933x,
// AR934x and QCA955x, the reference clock the bootstrap pins select), or
// returns 0 for a chip of another family or a configuration that divides
// by zero.
//
//go:nosplit
func CPUHz[P Phys](p P) uint32 {
	switch family(p) {
	case AR71xx:
		cfg := p.Read32(PhysPLL + PLLCPUConfig)
		pll := (cfg>>PLLFBShift71xx&PLLFBMask71xx + 1) * RefHz71xx
		return pll / (cfg>>PLLCPUDivShift71xx&PLLCPUDivMask71xx + 1)
	case AR724x, AR913x:
		cfg := p.Read32(PhysPLL + PLLCPUConfig)
		div := uint64(cfg>>PLLRefDivShift724x&PLLRefDivMask724x) * 2
		if div == 0 {
			return 0
		}
		return uint32(RefHz724x * uint64(cfg&PLLFBMask724x) / div)
	case AR933x:
		ref, pll := pll933x(p)
		ctl := p.Read32(PhysPLL + PLLClockCtrl933x)
		if ctl&PLLClockBypass933x != 0 {
			return ref
		}
		return uint32(pll / uint64(ctl>>PLLCPUDivShift933x&PLLCPUDivMask933x+1))
	case AR934x, QCA955x:
		return cpuHz934x(p)
	}
	return 0
}

// WatchdogHz returns the rate the reset block's watchdog timer counts down
// at: the AHB clock on AR71xx, AR913x, AR724x and AR933x, the reference
// clock on AR934x and QCA955x (Linux arch/mips/ath79/clock.c, the "wdt"
// clock alias per SoC, which drivers/watchdog/ath79_wdt.c loads its timer
// from; FreeBSD ar71xx_wdog.c counts in the same clock). 0 for a chip of
// another family or a configuration that divides by zero.
//
//go:nosplit
func WatchdogHz[P Phys](p P) uint32 {
	switch family(p) {
	case AR71xx:
		cfg := p.Read32(PhysPLL + PLLCPUConfig)
		return CPUHz(p) / ((cfg>>PLLAHBDivShift71xx&PLLAHBDivMask71xx + 1) * 2)
	case AR724x, AR913x:
		cfg := p.Read32(PhysPLL + PLLCPUConfig)
		return CPUHz(p) / ((cfg>>PLLAHBDivShift724x&PLLAHBDivMask724x + 1) * 2)
	case AR933x:
		ref, pll := pll933x(p)
		ctl := p.Read32(PhysPLL + PLLClockCtrl933x)
		if ctl&PLLClockBypass933x != 0 {
			return ref
		}
		return uint32(pll / uint64(ctl>>PLLAHBDivShift933x&PLLAHBDivMask933x+1))
	case AR934x, QCA955x:
		if p.Read32(PhysReset+RstBootstrap934x)&Bootstrap934xRef40 != 0 {
			return RefHz40
		}
		return RefHz25
	}
	return 0
}

// pll933x returns the AR933x reference clock and CPU PLL output (0 for a
// zero divider).
//
//go:nosplit
func pll933x[P Phys](p P) (ref uint32, pll uint64) {
	ref = RefHz25
	if p.Read32(PhysReset+RstBootstrap933x)&Bootstrap933xRef40 != 0 {
		ref = RefHz40
	}
	cfg := p.Read32(PhysPLL + PLLCPUConfig)
	refDiv := cfg >> PLLRefDivShift933x & PLLRefDivMask933x
	out := cfg >> PLLOutDivShift933x & PLLOutDivMask933x
	if out == 0 {
		out = 1
	}
	if refDiv == 0 {
		return ref, 0
	}
	return ref, uint64(ref) / uint64(refDiv) * uint64(cfg>>PLLNIntShift933x&PLLNIntMask933x) >> out
}

// cpuHz934x is CPUHz for AR934x and QCA955x (Linux ar934x_clocks_init,
// qca955x_clocks_init).
//
//go:nosplit
func cpuHz934x[P Phys](p P) uint32 {
	fam := family(p)
	ref := uint64(RefHz25)
	if p.Read32(PhysReset+RstBootstrap934x)&Bootstrap934xRef40 != 0 {
		ref = RefHz40
	}
	ctl := p.Read32(PhysPLL + PLLClkCtrl934x)
	if ctl&ClkCtrlCPUBypass934x != 0 {
		return uint32(ref)
	}
	fromCPU := ctl&ClkCtrlCPUFromCPUPLL != 0
	if fam == QCA955x {
		fromCPU = !fromCPU // see ClkCtrlCPUFromCPUPLL
	}
	var pll uint64
	switch {
	case fam == AR934x && fromCPU && p.Read32(PhysSRIF934x+SRIFCPUDPLL2)&SRIFDPLL2LocalPLL != 0:
		pll = srifHz(p, ref, SRIFCPUDPLL1, SRIFCPUDPLL2)
	case fam == AR934x && !fromCPU && p.Read32(PhysSRIF934x+SRIFDDRDPLL2)&SRIFDPLL2LocalPLL != 0:
		pll = srifHz(p, ref, SRIFDDRDPLL1, SRIFDDRDPLL2)
	case fromCPU:
		c := p.Read32(PhysPLL + PLLCPUConfig934x)
		pll = pllHz(ref, c>>PLLRefDivShift934x&PLLRefDivMask934x, c>>PLLNIntShift934x&PLLNIntMask934x,
			c&PLLNFracMask934x, 6, c>>PLLOutDivShift934x&PLLOutDivMask934x)
	default:
		c := p.Read32(PhysPLL + PLLDDRConfig934x)
		pll = pllHz(ref, c>>PLLDDRRefDivShift934x&PLLDDRRefDivMask934x, c>>PLLDDRNIntShift934x&PLLDDRNIntMask934x,
			c&PLLDDRNFracMask934x, 10, c>>PLLDDROutDivShift934x&PLLDDROutDivMask934x)
	}
	return uint32(pll / uint64(ctl>>ClkCtrlPostDivShift&ClkCtrlPostDivMask+1))
}

//go:nosplit
func srifHz[P Phys](p P, ref uint64, dpll1, dpll2 uint32) uint64 {
	d1 := p.Read32(PhysSRIF934x + dpll1)
	out := p.Read32(PhysSRIF934x+dpll2) >> SRIFDPLL2OutDivSh & SRIFDPLL2OutDivMask
	return pllHz(ref, d1>>SRIFDPLL1RefDivSh&SRIFDPLL1RefDivMask, d1>>SRIFDPLL1NIntShift&SRIFDPLL1NIntMask,
		d1&SRIFDPLL1NFracMask, 18, out)
}

// pllHz is ref / refDiv x (nint + nfrac / 2^fracBits) >> outDiv, 0 for a
// zero divider.
//
//go:nosplit
func pllHz(ref uint64, refDiv, nint, nfrac, fracBits, outDiv uint32) uint64 {
	if refDiv == 0 {
		return 0
	}
	hz := ref*uint64(nint)/uint64(refDiv) + ref*uint64(nfrac)/(uint64(refDiv)<<fracBits)
	return hz >> outDiv
}

// RAMSize finds the RAM size by aliasing: the DDR controller ignores
// address bits above the RAM's size, so the RAM repeats every size bytes.
// It compares ramProbe words at physical probe (which must hold varied
// data: the image's headers and text) with the same words size bytes on,
// for 2 MiB up to 128 MiB, the way Linux does on this family
// (arch/mips/ath79/setup.c, ath79_detect_mem_size), and returns 256 MiB
// (what kseg0 reaches) if no copy matches.
//
//go:nosplit
func RAMSize[P Phys](p P, probe uint32) uint32 {
	for size := uint32(2 << 20); size < 256<<20; size <<= 1 {
		same := true
		for i := uint32(0); i < ramProbe && same; i++ {
			same = p.Read32(probe+4*i) == p.Read32(probe+size+4*i)
		}
		if same {
			return size
		}
	}
	return 256 << 20
}
