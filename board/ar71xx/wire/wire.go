// Package wire brings up an AR71xx-family router's Ethernet from its
// description (board/ar71xx/boardfile) alone: the arge MACs, the PHYs of
// MACs that have their own, the switch with the board's profile and
// default VLANs, link following, and the 802.1Q trunks of MACs that carry
// several ports as VLANs. It returns the router's ports.
//
// The same code runs on the hardware (board/ar71xx/router, whose Hardware
// is the kernel's register windows and memory) and on the board's sim
// twin (board/sim, whose Hardware is the hardware models), so the twin's
// CI tests exercise the bare-metal bring-up path.
//
// What the SoC package offers for a MAC's interface is applied: GE0's
// interface select in ETH_CFG on AR934x/QCA955x. The description's PLL
// values (the device trees' pll-data) are not: soc/ar71xx programs each
// speed's clock from its per-chip table (SoC.SetEthSpeed), and the QCA955x
// SGMII link of GE1 and the AR71xx MII_CTRL interface select are left as
// the boot loader set them. Those are the known gaps on real hardware.
package wire

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gowrt/gowrt/arge"
	"github.com/gowrt/gowrt/arswitch"
	"github.com/gowrt/gowrt/barrier"
	"github.com/gowrt/gowrt/board"
	"github.com/gowrt/gowrt/board/ar71xx/argeport"
	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/mdio"
	"github.com/gowrt/gowrt/mdio/phy"
	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/net/vlan"
	"github.com/gowrt/gowrt/soc/ar71xx"
)

// Hardware is what Ports needs from the platform.
type Hardware interface {
	// SoC returns the identified SoC with its register blocks mapped.
	SoC() (*ar71xx.SoC, error)
	// MAC returns the register window of Ethernet unit u.
	MAC(u ar71xx.EthUnit) (barrier.Space, error)
	// DMA is where rings and buffers come from.
	DMA() busdma.Platform
	// Interrupt connects handler to unit u's CPU interrupt line.
	Interrupt(u ar71xx.EthUnit, name string, handler func()) error
	// Sleep waits for settle delays (MDIO polls, switch page changes).
	Sleep(d time.Duration)
}

// Link polling intervals: a PHY the board follows (it wires no PHY
// interrupt), and the switch's port links, whose going down flushes the
// port's learned addresses (FreeBSD's arswitch polls once a second).
const (
	PHYPoll    = 100 * time.Millisecond
	SwitchPoll = 500 * time.Millisecond
)

// CPULink is what the MAC at a switch's CPU port is told: the CPU port is
// forced to 1000 Mbit/s full duplex by the switch driver (arswitch's CPU
// port setup; OpenWrt's fixed-link in the device trees).
var CPULink = gnet.LinkState{Up: true, SpeedMbps: 1000, FullDuplex: true}

// ErrBoard wraps every error about a description Ports cannot wire.
var ErrBoard = errors.New("wire: board description cannot be wired")

// Wired is a brought-up board.
type Wired struct {
	// Ports are the router's ports, in the description's order.
	Ports []board.Port
	// Switch is the attached switch, nil if the board has none.
	Switch *arswitch.Switch
	// NICs are the MAC drivers by unit; Trunks the 802.1Q trunks by unit
	// (only units carrying VLANs).
	NICs   map[int]*arge.NIC
	Trunks map[int]*vlan.Trunk
	// PHYs are the PHYs the board follows, by MAC unit.
	PHYs map[int]*phy.PHY

	linkErrs atomic.Uint64
	lastErr  atomic.Value // error
	stop     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once
}

// LinkErrors returns how many background link polls failed, and the last
// failure.
func (w *Wired) LinkErrors() (uint64, error) {
	e, _ := w.lastErr.Load().(error)
	return w.linkErrs.Load(), e
}

func (w *Wired) linkErr(err error) {
	w.linkErrs.Add(1)
	w.lastErr.Store(err)
}

// Close stops the link polling. Stop the NICs (the router) first or
// after: Close does not touch them.
func (w *Wired) Close() error {
	w.once.Do(func() {
		close(w.stop)
		w.wg.Wait()
	})
	return nil
}

func bad(b *boardfile.Board, format string, a ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrBoard, b.Name, fmt.Sprintf(format, a...))
}

// Ports brings up b on hw and returns the router's ports in b.Ports order.
// base is the board's MAC address: the MAC carrying the LAN gets base, a
// MAC carrying only the WAN base+1 (OpenWrt's TP-Link convention; a MAC
// carrying both as VLANs has one address, base). On error everything
// started so far is stopped; MAC drivers created are not started.
func Ports(b *boardfile.Board, hw Hardware, base gnet.MAC) (*Wired, error) {
	if b == nil || hw == nil {
		return nil, errors.New("wire: nil board or hardware")
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if err := checkVLANs(b); err != nil {
		return nil, err
	}
	s, err := hw.SoC()
	if err != nil {
		return nil, fmt.Errorf("wire: %s: SoC: %w", b.Name, err)
	}
	if want := ar71xx.FamilyOf(b.Rev); s.Info.Family != want {
		return nil, fmt.Errorf("wire: %s: the description says %v (REV_ID %#x), the SoC is %v", b.Name, want, b.Rev, s.Info.Family)
	}
	w := &Wired{NICs: map[int]*arge.NIC{}, Trunks: map[int]*vlan.Trunk{}, PHYs: map[int]*phy.PHY{}, stop: make(chan struct{})}
	ok := false
	defer func() {
		if !ok {
			_ = w.Close()
		}
	}()

	// MACs' register windows and management buses, interfaces.
	regs := map[int]barrier.Space{}
	miis := map[int]*arge.MII{}
	for _, e := range b.Eth {
		u := ar71xx.EthUnits[e.Unit]
		r, err := hw.MAC(u)
		if err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d registers: %w", b.Name, e.Unit, err)
		}
		regs[e.Unit] = r
		m := arge.NewMII(r)
		m.Delay = hw.Sleep
		m.Reset(uint32(s.Info.MDIODefaultIndex))
		miis[e.Unit] = m
		if err := setInterface(b, s, e); err != nil {
			return nil, err
		}
	}

	// The switch, its default VLANs.
	if sw := b.Switch; sw != nil {
		builtIn := sw.Chip == arswitch.ChipAR7240 || sw.Chip == arswitch.ChipAR934x
		prof := sw.Profile.Clone()
		w.Switch, err = arswitch.Attach(arswitch.Config{Bus: miis[sw.MDIOUnit], BuiltIn: builtIn, Board: &prof, Sleep: hw.Sleep})
		if err != nil {
			return nil, fmt.Errorf("wire: %s: switch on GE%d's MDIO: %w", b.Name, sw.MDIOUnit, err)
		}
		if got := w.Switch.Info().Chip; got != sw.Chip {
			return nil, fmt.Errorf("wire: %s: the description says an %v switch, GE%d's MDIO has an %v", b.Name, sw.Chip, sw.MDIOUnit, got)
		}
		if err := setVLANs(b, w.Switch); err != nil {
			return nil, err
		}
	}

	// MAC drivers.
	for _, e := range b.Eth {
		u := ar71xx.EthUnits[e.Unit]
		cfg, err := argeport.Config(s, u, regs[e.Unit], hw.DMA())
		if err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d: %w", b.Name, e.Unit, err)
		}
		cfg.MAC = macFor(b, e.Unit, base)
		nic, err := arge.NewNIC(cfg)
		if err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d driver: %w", b.Name, e.Unit, err)
		}
		if err := hw.Interrupt(u, fmt.Sprintf("arge%d", e.Unit), nic.Interrupt); err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d interrupt: %w", b.Name, e.Unit, err)
		}
		w.NICs[e.Unit] = nic
	}

	// Links: own PHYs followed, CPU ports fixed, switch ports polled.
	for _, e := range b.Eth {
		nic := w.NICs[e.Unit]
		if e.SwitchPort >= 0 {
			if err := nic.SetLink(CPULink); err != nil {
				return nil, fmt.Errorf("wire: %s: GE%d link to switch port %d: %w", b.Name, e.Unit, e.SwitchPort, err)
			}
			continue
		}
		var bus mdio.Bus
		switch {
		case e.PHYViaSwitch && w.Switch == nil:
			return nil, bad(b, "GE%d's PHY is managed through a switch, and there is none", e.Unit)
		case e.PHYViaSwitch:
			bus = w.Switch.PHYBus()
		default:
			m, ok := miis[e.PHYUnit]
			if !ok {
				return nil, bad(b, "GE%d's PHY is on GE%d's MDIO, which is not used", e.Unit, e.PHYUnit)
			}
			bus = lockedBus{m}
		}
		p, err := phy.New(bus, e.PHY)
		if err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d's PHY %d: %w", b.Name, e.Unit, e.PHY, err)
		}
		if err := p.Reset(); err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d's PHY %d reset: %w", b.Name, e.Unit, e.PHY, err)
		}
		if err := p.StartAutoneg(phy.All); err != nil {
			return nil, fmt.Errorf("wire: %s: GE%d's PHY %d autonegotiation: %w", b.Name, e.Unit, e.PHY, err)
		}
		w.PHYs[e.Unit] = p
		w.wg.Add(1)
		go func(unit int) {
			defer w.wg.Done()
			phy.Follow(p, nic, PHYPoll, w.stop, func(err error) { w.linkErr(fmt.Errorf("GE%d: %w", unit, err)) })
		}(e.Unit)
	}
	if w.Switch != nil {
		if _, err := w.Switch.PollLinks(); err != nil {
			return nil, fmt.Errorf("wire: %s: switch port links: %w", b.Name, err)
		}
		w.wg.Add(1)
		go w.pollSwitch()
	}

	// Router ports, with trunks for MACs carrying VLANs.
	for _, p := range b.Ports {
		nic := gnet.NIC(w.NICs[p.Unit])
		if p.VID != 0 {
			t, err := w.trunk(b, p.Unit)
			if err != nil {
				return nil, err
			}
			child, err := t.Port(p.VID)
			if err != nil {
				return nil, fmt.Errorf("wire: %s: port %s: %w", b.Name, p.Name, err)
			}
			nic = child
		}
		w.Ports = append(w.Ports, board.Port{Name: p.Name, Role: p.Role, NIC: nic})
	}
	ok = true
	return w, nil
}

func (w *Wired) pollSwitch() {
	defer w.wg.Done()
	t := time.NewTicker(SwitchPoll)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		if _, err := w.Switch.PollLinks(); err != nil {
			w.linkErr(fmt.Errorf("switch: %w", err))
		}
	}
}

// trunk returns unit's 802.1Q trunk, made on first use with a child per
// VID the description puts on the unit.
func (w *Wired) trunk(b *boardfile.Board, unit int) (*vlan.Trunk, error) {
	if t := w.Trunks[unit]; t != nil {
		return t, nil
	}
	var vids []uint16
	for _, p := range b.Ports {
		if p.Unit == unit && p.VID != 0 {
			vids = append(vids, p.VID)
		}
	}
	t, err := vlan.New(w.NICs[unit], vlan.Config{VIDs: vids, Name: fmt.Sprintf("eth%d", unit)})
	if err != nil {
		return nil, fmt.Errorf("wire: %s: GE%d trunk: %w", b.Name, unit, err)
	}
	w.Trunks[unit] = t
	return t, nil
}

// macFor: base for a MAC carrying a LAN port, base+1 for one carrying only
// the WAN.
func macFor(b *boardfile.Board, unit int, base gnet.MAC) gnet.MAC {
	for _, p := range b.Ports {
		if p.Unit == unit && p.Role == board.LAN {
			return base
		}
	}
	return addMAC(base, 1)
}

// addMAC adds n to the low 24 bits (the NIC-specific part), as OpenWrt's
// macaddr_add does.
func addMAC(m gnet.MAC, n uint32) gnet.MAC {
	v := uint32(m[3])<<16 | uint32(m[4])<<8 | uint32(m[5])
	v += n
	m[3], m[4], m[5] = byte(v>>16), byte(v>>8), byte(v)
	return m
}

// setInterface selects GE0's interface where the SoC has ETH_CFG
// (AR934x, QCA955x). Other families, and GE1, have nothing the SoC
// package programs.
func setInterface(b *boardfile.Board, s *ar71xx.SoC, e boardfile.Eth) error {
	if e.Unit != 0 || (s.Info.Family != ar71xx.AR934x && s.Info.Family != ar71xx.QCA955x) {
		return nil
	}
	var m ar71xx.GE0Interface
	switch e.If {
	case boardfile.RGMII:
		m = ar71xx.GE0RGMII
	case boardfile.MII:
		m = ar71xx.GE0MII
	case boardfile.GMII:
		m = ar71xx.GE0GMII
	case boardfile.RMII:
		m = ar71xx.GE0RMII
	default:
		return bad(b, "GE0 interface %v is not one ETH_CFG selects", e.If)
	}
	if err := s.SetGE0Interface(m); err != nil {
		return fmt.Errorf("wire: %s: GE0 interface %v: %w", b.Name, e.If, err)
	}
	return nil
}

// checkVLANs checks what Validate does not and Ports relies on: a port
// with a VID is tagged at its MAC's CPU port (the trunk takes tagged
// frames only), a port without one has its MAC to itself and is untagged
// there.
func checkVLANs(b *boardfile.Board) error {
	perUnit := map[int]int{}
	for _, p := range b.Ports {
		perUnit[p.Unit]++
	}
	for _, p := range b.Ports {
		e, err := b.EthUnit(p.Unit)
		if err != nil {
			return bad(b, "port %s: %v", p.Name, err)
		}
		if p.VID == 0 {
			if perUnit[p.Unit] > 1 {
				return bad(b, "port %s shares GE%d with another port but has no VLAN", p.Name, p.Unit)
			}
			if e.SwitchPort >= 0 && cpuTagged(b, e.SwitchPort) {
				return bad(b, "port %s: GE%d's switch port %d is tagged, the port has no VLAN", p.Name, p.Unit, e.SwitchPort)
			}
			continue
		}
		if !tagged(b, p.VID, e.SwitchPort) {
			return bad(b, "port %s: VLAN %d is not tagged at GE%d's switch port %d", p.Name, p.VID, p.Unit, e.SwitchPort)
		}
	}
	return nil
}

func tagged(b *boardfile.Board, vid uint16, port int) bool {
	if b.Switch == nil {
		return false
	}
	for _, v := range b.Switch.VLANs {
		if v.VID == vid {
			for _, t := range v.Tagged {
				if t == port {
					return true
				}
			}
		}
	}
	return false
}

func cpuTagged(b *boardfile.Board, port int) bool {
	if b.Switch == nil {
		return false
	}
	for _, v := range b.Switch.VLANs {
		if tagged(b, v.VID, port) {
			return true
		}
	}
	return false
}

// setVLANs programs the description's default VLANs: 802.1Q mode, one
// group per VLAN (members untagged unless listed as tagged), and each
// port's PVID the VLAN it is untagged in (or, for a port tagged in all
// its VLANs, its first VLAN). Without VLANs the switch stays in its
// single-group default.
func setVLANs(b *boardfile.Board, sw *arswitch.Switch) error {
	vs := b.Switch.VLANs
	if len(vs) == 0 {
		return nil
	}
	if err := sw.SetVLANMode(arswitch.ModeDot1Q); err != nil {
		return fmt.Errorf("wire: %s: switch 802.1Q mode: %w", b.Name, err)
	}
	pvid := map[int]uint16{}
	for i, v := range vs {
		members := arswitch.Ports(v.Ports...)
		g := arswitch.VLANGroup{VID: int(v.VID), Members: members, Untagged: members &^ arswitch.Ports(v.Tagged...)}
		if err := sw.SetVLANGroup(i, g); err != nil {
			return fmt.Errorf("wire: %s: switch VLAN %d: %w", b.Name, v.VID, err)
		}
		for _, p := range v.Ports {
			if _, set := pvid[p]; !set || g.Untagged.Has(p) {
				pvid[p] = v.VID
			}
		}
	}
	ports := make([]int, 0, len(pvid))
	for p := range pvid {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	for _, p := range ports {
		cur, err := sw.Port(p)
		if err != nil {
			return fmt.Errorf("wire: %s: switch port %d: %w", b.Name, p, err)
		}
		cfg := cur.PortConfig
		cfg.PVID = int(pvid[p])
		if err := sw.SetPort(p, cfg); err != nil {
			return fmt.Errorf("wire: %s: switch port %d PVID %d: %w", b.Name, p, pvid[p], err)
		}
	}
	return nil
}

// lockedBus holds the MAC's MDIO lock for each transaction of a PHY
// driver, so a PHY access never falls inside a switch driver's paged
// register sequence on the same bus (RouterStation Pro: the AR8316's PHY4
// on GE0's MDIO with the switch).
type lockedBus struct{ m *arge.MII }

func (l lockedBus) Read(phy, reg int) (uint16, error) {
	l.m.Lock()
	defer l.m.Unlock()
	return l.m.Read(phy, reg)
}

func (l lockedBus) Write(phy, reg int, val uint16) error {
	l.m.Lock()
	defer l.m.Unlock()
	return l.m.Write(phy, reg, val)
}
