package arswitch

import (
	"errors"
	"fmt"
)

// ErrBoard is returned for board descriptions the chip cannot implement.
var ErrBoard = errors.New("arswitch: invalid board configuration")

// CPUPortMode is how a switch MAC is wired to a CPU Ethernet MAC.
type CPUPortMode int

const (
	ModeRGMII CPUPortMode = iota
	ModeGMII
	ModeMII
	ModeSGMII
)

func (m CPUPortMode) String() string {
	switch m {
	case ModeRGMII:
		return "RGMII"
	case ModeGMII:
		return "GMII"
	case ModeMII:
		return "MII"
	case ModeSGMII:
		return "SGMII"
	}
	return fmt.Sprintf("CPUPortMode(%d)", int(m))
}

// CPUPort describes one switch port wired to a CPU MAC.
type CPUPort struct {
	Port int // switch port: 0, or 6 (AR8327 GMAC6)
	Mode CPUPortMode
	// RGMII clock delay selectors (AR8327 pads: 0-3); nil leaves the
	// delay disabled.
	TXDelay, RXDelay *uint8
}

// LEDConfig is the AR8327 LED_CTRL0..3 programming and the open-drain strap.
type LEDConfig struct {
	Ctrl      [4]uint32
	OpenDrain bool
}

// Board is the board-specific wiring of a switch, given as data.
type Board struct {
	Name string
	CPU  []CPUPort
	// PortPHY maps switch port → internal PHY address; -1 for none.
	// nil means the usual port n ↔ PHY n-1 for ports 1-5.
	PortPHY []int
	// Labels are the front-panel names by switch port ("" if unlabelled).
	Labels []string
	// PHY4ToCPU: the fifth PHY is wired to the CPU's second MAC instead of
	// switch port 5 (AR8316 RGMII "port 4 as PHY" mode; AR934x
	// OPER_MODE1.PHY4_MII_EN).
	PHY4ToCPU bool
	LEDs      *LEDConfig
}

// Clone returns a deep copy: board profiles are shared package variables,
// so modify a clone, never a profile's slices.
func (b Board) Clone() Board {
	c := b
	c.CPU = make([]CPUPort, len(b.CPU))
	for i, cp := range b.CPU {
		if cp.TXDelay != nil {
			cp.TXDelay = delay(*cp.TXDelay)
		}
		if cp.RXDelay != nil {
			cp.RXDelay = delay(*cp.RXDelay)
		}
		c.CPU[i] = cp
	}
	if b.PortPHY != nil {
		c.PortPHY = append([]int(nil), b.PortPHY...)
	}
	if b.Labels != nil {
		c.Labels = append([]string(nil), b.Labels...)
	}
	if b.LEDs != nil {
		l := *b.LEDs
		c.LEDs = &l
	}
	return c
}

func (b *Board) isCPUPort(p int) bool {
	for _, c := range b.CPU {
		if c.Port == p {
			return true
		}
	}
	return false
}

func (b *Board) cpuMode(port int) CPUPortMode {
	for _, c := range b.CPU {
		if c.Port == port {
			return c.Mode
		}
	}
	return ModeGMII
}

// phyOf returns the PHY address behind switch port p, -1 if none.
func (b *Board) phyOf(p int) int {
	if b.PortPHY != nil {
		if p < len(b.PortPHY) {
			return b.PortPHY[p]
		}
		return -1
	}
	if p >= 1 && p <= 5 {
		if p == 5 && b.PHY4ToCPU {
			return -1
		}
		return p - 1
	}
	return -1
}

// validate checks what every chip needs; chipOps.checkBoard the rest.
func (b *Board) validate(id ChipID, nports int) error {
	if len(b.CPU) == 0 {
		return fmt.Errorf("%w: %s: no CPU port", ErrBoard, b.Name)
	}
	for _, c := range b.CPU {
		ok := c.Port == 0 || (c.Port == 6 && nports == 7)
		if !ok {
			return fmt.Errorf("%w: %s: port %d cannot be a CPU port on %v", ErrBoard, b.Name, c.Port, id)
		}
	}
	if b.PortPHY != nil && len(b.PortPHY) > nports {
		return fmt.Errorf("%w: %s: %d port→PHY entries for %d ports", ErrBoard, b.Name, len(b.PortPHY), nports)
	}
	for p, phy := range b.PortPHY {
		if phy < -1 || phy > 4 {
			return fmt.Errorf("%w: %s: port %d → PHY %d (internal PHYs are 0-4)", ErrBoard, b.Name, p, phy)
		}
	}
	return nil
}

func delay(v uint8) *uint8 { return &v }

// The boards Attach assumes when given none: a built-in switch (AR7240,
// AR934x) reaches its CPU MAC over an internal GMII link, an external
// AR8216/AR8316 over RGMII. Named profiles of particular boards live with
// those boards (board/ar71xx/profiles), not here.
var (
	defaultBuiltIn = Board{Name: "AR934x-builtin", CPU: []CPUPort{{Port: 0, Mode: ModeGMII}}}
	defaultRGMII   = Board{Name: "generic-rgmii", CPU: []CPUPort{{Port: 0, Mode: ModeRGMII}}}
)
