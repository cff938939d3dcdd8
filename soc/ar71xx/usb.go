package ar71xx

import (
	"errors"
	"fmt"
	"time"

	"github.com/gowrt/gowrt/barrier"
)

// USB facts: Linux arch/mips/ath79/dev-usb.c (bring-up sequences, EHCI
// bases and platform data: "has_tt" and caps_offset 0x100 on every core
// after the AR71xx's) and ar71xx_regs.h (reset bits, USB control block),
// FreeBSD ar71xxreg.h / ar724xreg.h / ar91xxreg.h / ar933xreg.h /
// ar934xreg.h / qca955xreg.h (the same reset bits) and the FreeBSD hints
// (the EHCI at 0x1B00_0000 on CPU IP3).
const (
	// PhysEHCI2955x is the QCA955x's second EHCI (Linux QCA955X_EHCI1_BASE).
	PhysEHCI2955x = 0x1B40_0000
	// EHCISize is each EHCI block's register window (Linux *_EHCI_SIZE).
	EHCISize = 0x1000
	// ehciCapsChipIdea: the ChipIdea cores put the EHCI capability
	// registers 0x100 into the block (Linux ath79_ehci_pdata_v2
	// caps_offset), after the core's own ID registers.
	ehciCapsChipIdea = 0x100

	// USB control block (PhysUSB) offsets, AR71xx and AR7240 only.
	USBCtrlFLADJ  = 0x00
	USBCtrlConfig = 0x04
	// usbConfigSwap71xx turns on the AR71xx core's buffer and
	// descriptor swap bits (Linux ath79_usb_setup writes 0xf0000); with
	// them the core reads little-endian descriptors on the big-endian
	// bus, as Linux (which does not select USB_EHCI_BIG_ENDIAN_DESC on
	// ath79) lays them out.
	usbConfigSwap71xx = 0xf0000
	// usbFLADJ71xx adjusts the time between SOFs, a hardware bug
	// work-around (Linux ath79_usb_setup: 0x20c00).
	usbFLADJ71xx = 0x20c00

	// Reset-module bits of the USB block (see §2.1 of the reference).
	ResetUSBPHY         = 1 << 4
	ResetUSBHost        = 1 << 5
	ResetUSBOHCIDLL71xx = 1 << 6  // AR71xx
	ResetUSBSusOvr71xx  = 1 << 10 // USBSUS_OVERRIDE on AR71xx and AR913x
	ResetUSBSusOvr      = 1 << 3  // USBSUS_OVERRIDE on AR724x, AR933x, AR934x, QCA955x
	ResetUSBPHYAnalog   = 1 << 11 // AR934x, QCA955x
)

// USBBringUp is how the SoC's USB block is taken out of reset.
type USBBringUp uint8

const (
	// USBBringUpNone: nothing to do (QCA955x: Linux registers the
	// controllers without touching the reset register).
	USBBringUpNone USBBringUp = iota
	// USBBringUp71xx: host, PHY and OHCI DLL held in reset for 1 s and
	// released, the USB CONFIG swap bits and FLADJ written, then 900 ms
	// before the controller is used (Linux ath79_usb_setup).
	USBBringUp71xx
	// USBBringUpOverride: USBSUS_OVERRIDE set, then host and PHY
	// released, 10 ms apart (Linux ar724x/ar913x/ar933x_usb_setup).
	USBBringUpOverride
	// USBBringUp934x: USBSUS_OVERRIDE set, then PHY, PHY analog and host
	// released, 1 ms apart (Linux ar934x_usb_setup).
	USBBringUp934x
)

// USBUnit is one EHCI of a SoC as the board wires it; its fields are what
// ehci.Config needs besides memory and a name.
type USBUnit struct {
	Unit int
	// Base is the block's physical base; the capability registers, the
	// ehci driver's Regs, start CapOffset into it.
	Base, CapOffset, Size uint32
	// IRQ is the CPU interrupt line: IP3. On the QCA955x both
	// controllers share IP3 and EXT_INT_STATUS bit IP3Bit tells them
	// apart (Linux ATH79_IP3_IRQ; bits 24 and 28 per the reference).
	IRQ    int
	IP3Bit int // -1: the line is the controller's alone
	// Flush is the DDR write-buffer channel drained before the
	// interrupt handler reads what the controller wrote; the SoC's
	// IRQFlush says whether IP3 does it.
	Flush FlushChannel
	// IntegratedTT: a ChipIdea core with a transaction translator on
	// its root port (Linux ath79 "has_tt"); without it (AR71xx),
	// full/low-speed devices belong to the OHCI companion.
	IntegratedTT bool
	// Companions is HCSPARAMS N_CC as the board expects it: the AR71xx
	// OHCI at PhysOHCI.
	Companions int
	// SynopsysIAABug: the AR71xx core may hold an unlinked qH past the
	// async-advance answer (Linux ath79_ehci_pdata_v1
	// has_synopsys_hc_bug); ehci.Config.SynopsysIAABug works around it.
	SynopsysIAABug bool
	// RegOrder: registers are read in the CPU's order, big-endian (Linux
	// reads them with readl, which does not swap on a big-endian MIPS
	// without SWAP_IO_SPACE).
	RegOrder barrier.Order
	// DescOrder: little-endian. Linux's config ATH79 (arch/mips/Kconfig)
	// selects only USB_EHCI_ROOT_HUB_TT, not USB_EHCI_BIG_ENDIAN_DESC,
	// so its EHCI writes descriptors with cpu_to_le32; the AR71xx core
	// is set up for that by its CONFIG swap bits (usbConfigSwap71xx),
	// the ChipIdea cores by USBMODE.ES left clear (Linux tdi_reset sets
	// it only for big_endian_mmio). A board that knows better sets the
	// ehci driver's DescOrder (and BigEndianCore) from its own data.
	DescOrder barrier.Order
}

// USBInfo is the SoC's USB block.
type USBInfo struct {
	Units   []USBUnit // empty: no EHCI (AR7240 has only an OHCI)
	BringUp USBBringUp
}

func ehciUnit(unit int, base, caps uint32, tt bool, ip3bit int) USBUnit {
	u := USBUnit{Unit: unit, Base: base, CapOffset: caps, Size: EHCISize, IRQ: CPUIRQUSB, IP3Bit: ip3bit,
		Flush: FlushUSB, IntegratedTT: tt, RegOrder: barrier.BigEndian, DescOrder: barrier.LittleEndian}
	if !tt {
		u.Companions = 1
		u.SynopsysIAABug = true
	}
	return u
}

// USB returns the SoC's USB block.
func (i *Info) USB() USBInfo {
	switch i.Family {
	case AR71xx:
		return USBInfo{Units: []USBUnit{ehciUnit(0, PhysEHCI, 0, false, -1)}, BringUp: USBBringUp71xx}
	case AR724x:
		if i.Name == "AR7240" {
			return USBInfo{} // OHCI only (Linux ar7240_usb_setup)
		}
		return USBInfo{Units: []USBUnit{ehciUnit(0, PhysEHCI, ehciCapsChipIdea, true, -1)}, BringUp: USBBringUpOverride}
	case AR913x, AR933x:
		return USBInfo{Units: []USBUnit{ehciUnit(0, PhysEHCI, ehciCapsChipIdea, true, -1)}, BringUp: USBBringUpOverride}
	case AR934x:
		return USBInfo{Units: []USBUnit{ehciUnit(0, PhysEHCI, ehciCapsChipIdea, true, -1)}, BringUp: USBBringUp934x}
	case QCA955x:
		return USBInfo{Units: []USBUnit{
			ehciUnit(0, PhysEHCI, ehciCapsChipIdea, true, 24),
			ehciUnit(1, PhysEHCI2955x, ehciCapsChipIdea, true, 28),
		}}
	}
	return USBInfo{}
}

// ErrNoUSB is returned by StartUSB on a SoC without an EHCI.
var ErrNoUSB = errors.New("ar71xx: SoC has no EHCI")

// StartUSB takes the USB block out of reset per the SoC's sequence. ctrl
// is the USB control block at PhysUSB, needed on the AR71xx only (nil
// elsewhere). It sleeps through the sequence's delays (almost 2 s on the
// AR71xx).
func (s *SoC) StartUSB(ctrl barrier.Space) error {
	u := s.Info.USB()
	if len(u.Units) == 0 {
		return fmt.Errorf("%w: %s", ErrNoUSB, s.Info.Name)
	}
	switch u.BringUp {
	case USBBringUp71xx:
		if ctrl == nil {
			return fmt.Errorf("ar71xx: %s: USB bring-up needs the USB control block", s.Info.Name)
		}
		mask := uint32(ResetUSBHost | ResetUSBPHY | ResetUSBOHCIDLL71xx)
		s.DeviceStop(mask)
		s.Delay(time.Second)
		s.DeviceStart(mask)
		ctrl.Write32(USBCtrlConfig, usbConfigSwap71xx)
		ctrl.Write32(USBCtrlFLADJ, usbFLADJ71xx)
		ctrl.Barrier()
		s.Delay(900 * time.Millisecond)
	case USBBringUpOverride:
		ovr := uint32(ResetUSBSusOvr)
		if s.Info.Family == AR913x {
			ovr = ResetUSBSusOvr71xx
		}
		s.DeviceStop(ovr)
		s.Delay(10 * time.Millisecond)
		s.DeviceStart(ResetUSBHost)
		s.Delay(10 * time.Millisecond)
		s.DeviceStart(ResetUSBPHY)
		s.Delay(10 * time.Millisecond)
	case USBBringUp934x:
		s.DeviceStop(ResetUSBSusOvr)
		s.Delay(time.Millisecond)
		for _, b := range []uint32{ResetUSBPHY, ResetUSBPHYAnalog, ResetUSBHost} {
			s.DeviceStart(b)
			s.Delay(time.Millisecond)
		}
	}
	return nil
}
