package sim

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gowrt/gowrt/arge/argesim"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/board/ar71xx/usbport"
	"github.com/gowrt/gowrt/hwsim"
	"github.com/gowrt/gowrt/net/tap"
	"github.com/gowrt/gowrt/soc/ar71xx"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/ehci/ehcisim"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

// The twin's USB: an ehcisim per EHCI the board wires out, modelled from
// the SoC's USB data (soc/ar71xx USBUnit: register and descriptor byte
// order, integrated TT, companions, the AR71xx core's IAA defect), on the
// CPU line the unit's IRQ names; and, when TwinConfig.USB names a TAP, an
// AX88179 (axgesim) on the board's first USB port whose Ethernet side is
// that TAP. Ports runs usbport.Start, the bare-metal USB bring-up, on
// these models. A board whose first USB port has an on-board hub
// (TL-WDR4300) gets a hub model (usbsim.Hub) there with the AX88179 in
// its first socket, like the real board.
type twinUSB struct {
	hcs     map[int]*ehcisim.Controller
	regions map[int]*hwsim.Region
	ctrl    *hwsim.Region // the AR71xx's USB control block
	ctrlReg *usbCtrlModel
	chip    *axgesim.Chip
	port    boardfile.USBPort // where the chip plugs in
	dev     *tap.Dev
	out     *pipe
	started *usbport.USB
	err     error
}

// ehciCapLength is where the modelled cores put their operational
// registers: 0x40 on the ChipIdea cores (Linux ci_hdrc's CAPLENGTH), 0x20
// on the AR71xx's (EHCI §2.2's usual value).
func ehciCapLength(u ar71xx.USBUnit) uint32 {
	if u.IntegratedTT {
		return 0x40
	}
	return 0x20
}

// usbCtrlModel is the AR71xx USB control block (FLADJ, CONFIG): plain
// registers the bring-up writes and a test reads back.
type usbCtrlModel struct{ regs [2]uint32 }

func (m *usbCtrlModel) ReadReg(off uint32, width int) uint32 {
	if off/4 < uint32(len(m.regs)) {
		return m.regs[off/4]
	}
	return 0
}

func (m *usbCtrlModel) WriteReg(off uint32, width int, v uint32) {
	if off/4 < uint32(len(m.regs)) {
		m.regs[off/4] = v
	}
}

// buildUSB models the board's EHCIs and the AX88179 the config asks for.
func (t *Twin) buildUSB(cpu *hwsim.Controller) error {
	b := t.b
	if len(b.USB) == 0 {
		if t.cfg.USB != "" {
			return fmt.Errorf("sim: %s has no USB port for the AX88179 on %s", b.Name, t.cfg.USB)
		}
		return nil
	}
	u := &t.usb
	u.hcs, u.regions = map[int]*ehcisim.Controller{}, map[int]*hwsim.Region{}
	info := t.socM.Info.USB()
	if info.BringUp == ar71xx.USBBringUp71xx {
		u.ctrlReg = &usbCtrlModel{}
		u.ctrl = t.sys.Bus.Map("usb-ctrl", 8, u.ctrlReg)
	}
	for _, p := range b.USB {
		if _, done := u.hcs[p.Unit]; done {
			continue
		}
		var unit *ar71xx.USBUnit
		for i := range info.Units {
			if info.Units[i].Unit == p.Unit {
				unit = &info.Units[i]
			}
		}
		if unit == nil {
			return fmt.Errorf("sim: %s: USB port %v on an EHCI the %s lacks", b.Name, p, t.socM.Info.Name)
		}
		hc := ehcisim.New(t.sys, cpu, ehcisim.Config{Ports: b.USBRootPorts(p.Unit), Companions: unit.Companions,
			IntegratedTT: unit.IntegratedTT, CapLength: ehciCapLength(*unit), RegOrder: unit.RegOrder,
			DescOrder: unit.DescOrder, Line: unit.IRQ, SynopsysIAABug: unit.SynopsysIAABug})
		u.hcs[p.Unit] = hc
		u.regions[p.Unit] = hc.Map(fmt.Sprintf("ehci%d", p.Unit))
		t.wg.Add(1)
		go func() { defer t.wg.Done(); hc.Pump(t.stop) }()
	}
	if t.cfg.USB == "" {
		return nil
	}
	u.port = b.USB[0]
	var err error
	if u.dev, err = tap.Open(t.cfg.USB); err != nil {
		return fmt.Errorf("sim: %s: AX88179's cable: %w", b.Name, err)
	}
	u.out = t.newPipe(func(f []byte) { _, _ = u.dev.Write(f) })
	start := time.Now()
	// The chip's MAC: the board's base with the locally administered
	// range's last byte, distinct from the router's own ports.
	mac := t.cfg.Base
	mac[0] |= 0x02
	mac[5] ^= 0xa8
	u.chip = axgesim.New(axgesim.Config{MAC: mac, Seed: t.cfg.Seed,
		Link:        axgesim.Media{Up: true, SpeedMbps: 1000, FullDuplex: true},
		Now:         func() time.Duration { return time.Since(start) },
		Transmitted: func(f []byte) { u.out.put(f) }})
	var fn usbsim.Function = u.chip.Function()
	if u.port.HubPorts > 0 { // the on-board hub, the AX88179 in its first socket
		hub := usbsim.NewHub(usbsim.HubConfig{Ports: u.port.HubPorts})
		hub.Plug(1, fn)
		fn = hub
	}
	u.hcs[u.port.Unit].Attach(u.port.Port, fn)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		buf := make([]byte, argesim.MaxFrame)
		for {
			n, err := u.dev.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrClosed) {
					t.logf("AX88179 cable read: %v; unplugged", err)
				}
				return
			}
			u.chip.Deliver(buf[:n])
		}
	}()
	return nil
}

// startUSB runs the bare-metal USB bring-up on the models. As on the
// router, a USB failure is logged and leaves the Ethernet ports working
// (USBError says what it was).
func (t *Twin) startUSB() []board.Port {
	if len(t.b.USB) == 0 {
		return nil
	}
	u, err := usbport.Start(t.b, t.Hardware().(usbport.Hardware), usbport.Config{Log: t.logf})
	if err != nil {
		t.usb.err = err
		t.logf("USB: %v; no USB ports", err)
		return nil
	}
	t.usb.started = u
	return u.Ports
}

// USBError returns why the USB bring-up failed (nil if it did not).
func (t *Twin) USBError() error { return t.usb.err }

// closeUSB stops the USB bring-up's buses and the AX88179's cable.
func (t *Twin) closeUSB() {
	if t.usb.started != nil {
		_ = t.usb.started.Close()
	}
	if t.usb.dev != nil {
		_ = t.usb.dev.Close()
	}
}

// USB returns what Ports brought up on the USB models (nil before, or on
// a board without USB).
func (t *Twin) USB() *usbport.USB { return t.usb.started }

// AX88179 returns the USB Ethernet chip model (nil unless TwinConfig.USB
// named a TAP).
func (t *Twin) AX88179() *axgesim.Chip { return t.usb.chip }

// EHCI returns the model of EHCI unit (nil if the board does not use it).
func (t *Twin) EHCI(unit int) *ehcisim.Controller { return t.usb.hcs[unit] }

// USBControl returns the AR71xx USB control block's FLADJ and CONFIG as
// the bring-up left them (zeros on other SoCs).
func (t *Twin) USBControl() (fladj, config uint32) {
	if t.usb.ctrlReg == nil {
		return 0, 0
	}
	t.sys.Do(func() { fladj, config = t.usb.ctrlReg.regs[0], t.usb.ctrlReg.regs[1] })
	return fladj, config
}

// SetUSBPlugged unplugs (false) or plugs back (true) the AX88179 on its
// root port.
func (t *Twin) SetUSBPlugged(plugged bool) error {
	u := &t.usb
	if u.chip == nil {
		return errors.New("sim: no AX88179 in this twin")
	}
	hc := u.hcs[u.port.Unit]
	if plugged {
		hc.Attach(u.port.Port, u.chip.Function())
	} else {
		hc.Detach(u.port.Port)
	}
	return nil
}

// usbport.Hardware on the models.

func (h twinHW) USBControl() (barrier.Space, error) {
	if h.t.usb.ctrl == nil {
		return nil, fmt.Errorf("sim: %s: no USB control block modelled", h.t.b.Name)
	}
	return h.t.usb.ctrl, nil
}

func (h twinHW) EHCI(u ar71xx.USBUnit) (barrier.Space, error) {
	r, ok := h.t.usb.regions[u.Unit]
	if !ok {
		return nil, fmt.Errorf("sim: %s: EHCI %d is not modelled (the board does not use it)", h.t.b.Name, u.Unit)
	}
	return r, nil
}

func (h twinHW) USBInterrupt(cpuLine int, name string, handler func()) error {
	return h.t.disp.Register(cpuLine, name, handler)
}

var _ usbport.Hardware = twinHW{}
