// Package qemu builds the one QEMU command line every gowrt tool, test and
// benchmark boots a malta image with.
//
// The line asks for nothing the firmware does not use, so it runs with only
// the qemu-system-mips package installed (Debian installs the option ROMs and
// VGA BIOS of ipxe-qemu and seabios as recommendations only, and CI does not
// install recommendations):
//
//   - -nodefaults: no VGA card (whose BIOS is vgabios-cirrus.bin), no default
//     NIC, no monitor, parallel port, floppy or CD-ROM;
//   - the on-board pcnet NIC (and the WAN pcnet, if asked for) is created
//     explicitly with an empty romfile property, so QEMU does not look for
//     its PXE ROM (efi-pcnet.rom);
//   - -kernel loads the ELF directly, so no boot BIOS is needed.
package qemu

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/gowrt/gowrt/internal/image"
)

// CPU is the CPU model gowrt boots malta with: the MIPS32 24Kc core of the
// AR71xx/AR913x SoCs (no FPU, 16 KiB/64 KiB caches).
const CPU = "24Kc"

// Deterministic are the options that make a run an instruction count: one
// emulated nanosecond per instruction, no sleeping while the guest idles,
// the guest's RTC on the virtual clock and a fixed seed for QEMU's random
// generator (without -seed the guest's boot differs by hundreds of
// instructions from run to run).
var Deterministic = []string{"-icount", "shift=0,sleep=off", "-rtc", "clock=vm", "-seed", "1"}

// WANSlot is the PCI slot of the WAN pcnet. On Malta it is the audio
// slot, empty in QEMU, whose INTA is wired to PIIX4 PIRQC (QEMU 7.2
// hw/isa/piix4.c pci_slot_get_pirq; Linux arch/mips/pci/fixup-malta.c),
// routed at reset to i8259 line 11: not the on-board NIC's line 10
// (slot 11, PIRQB), so each port has a line of its own. A second -nic
// would land in the first free slot (1, whose INTA is PIRQA, line 10),
// hence -device with an explicit address.
const WANSlot = 12

// Machine is one QEMU malta machine.
type Machine struct {
	// Board is a bootable board (image.Board.Bootable).
	Board  image.Board
	Kernel string // the firmware image (ELF)
	MemMiB int    // RAM; 0 means 128
	Append string // kernel command line: program arguments, K=V environment
	// NIC is the -nic backend of the on-board pcnet, e.g. "user",
	// "user,hostfwd=…" or "tap,ifname=…,script=no,downscript=no"
	// (the model is always pcnet). Empty means QEMU user networking with
	// the guest restricted from reaching anything outside it.
	NIC string
	// WAN, if not empty, adds a second pcnet, the board's WAN port, in
	// PCI slot WANSlot, with this -netdev backend (same syntax as NIC:
	// "user,restrict=on", "tap,ifname=…,script=no,downscript=no"). Empty
	// means one NIC, and the command line is what it was before WAN
	// existed.
	WAN string
	// WANMAC is the WAN pcnet's MAC address ("52:54:00:12:34:57"); empty
	// leaves it to QEMU, which numbers default MACs in creation order:
	// the on-board NIC, created with the machine, gets 52:54:00:12:34:56
	// and the WAN one, created after it, 52:54:00:12:34:57.
	WANMAC string
	// USBNet, if not empty, plugs QEMU's usb-net (a CDC Ethernet and
	// RNDIS function, hw/usb/dev-network.c) into root port 1 of the
	// PIIX4's UHCI (bus usb-bus.0, 12 Mbit/s) with this -netdev backend
	// (same syntax as WAN). board/malta/usb drives it.
	USBNet string
	// USBNetMAC is the usb-net's MAC address; empty leaves it to QEMU.
	// The function's MAC string, which the host side uses, has 0x40 for
	// its first octet whatever this is (QEMU's usb_net_realize).
	USBNetMAC string
	// Flash is a raw file backing the board's 4 MiB CFI flash; empty for
	// none.
	Flash string
	// Deterministic makes the run an instruction count (see Deterministic).
	Deterministic bool
	// Extra options go last.
	Extra []string
}

// Args returns QEMU's arguments (without the program name).
func (m Machine) Args() []string {
	mem := m.MemMiB
	if mem == 0 {
		mem = 128
	}
	nic := m.NIC
	if nic == "" {
		nic = "user,restrict=on"
	}
	args := []string{
		"-M", m.Board.Machine, "-cpu", CPU, "-m", strconv.Itoa(mem),
		"-kernel", m.Kernel,
		"-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
		// The malta board puts the first NIC, if it is a pcnet, in PCI
		// slot 11 like the real board's on-board one.
		"-global", "pcnet.romfile=", "-nic", nic + ",model=pcnet",
	}
	if m.WAN != "" {
		// QEMU reads addr as hexadecimal slot[.function].
		dev := fmt.Sprintf("pcnet,netdev=wan,romfile=,addr=%02x.0", WANSlot)
		if m.WANMAC != "" {
			dev += ",mac=" + m.WANMAC
		}
		args = append(args, "-netdev", m.WAN+",id=wan", "-device", dev)
	}
	if m.USBNet != "" {
		dev := "usb-net,netdev=usbnet,bus=usb-bus.0"
		if m.USBNetMAC != "" {
			dev += ",mac=" + m.USBNetMAC
		}
		args = append(args, "-netdev", m.USBNet+",id=usbnet", "-device", dev)
	}
	if m.Flash != "" {
		args = append(args, "-drive", "if=pflash,format=raw,file="+m.Flash)
	}
	if m.Deterministic {
		args = append(args, Deterministic...)
	}
	if m.Append != "" {
		args = append(args, "-append", m.Append)
	}
	return append(args, m.Extra...)
}

// Command returns the QEMU command for the machine; ctx ends it.
func (m Machine) Command(ctx context.Context) *exec.Cmd {
	return exec.CommandContext(ctx, m.Board.QEMU, m.Args()...)
}
