package arswitch

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gowrt/gowrt/mdio"
)

// Configuration errors. Every error a configuration call returns wraps one
// of these, and such a call leaves the switch registers untouched.
var (
	ErrBadPort     = errors.New("arswitch: no such port")
	ErrBadVID      = errors.New("arswitch: VLAN id out of range 1-4094")
	ErrBadGroup    = errors.New("arswitch: no such VLAN group")
	ErrDupVID      = errors.New("arswitch: VLAN id used by another group")
	ErrMode        = errors.New("arswitch: operation not valid in this VLAN mode")
	ErrUnsupported = errors.New("arswitch: chip cannot express this configuration")
)

// PortMask is a set of switch ports, bit n = port n.
type PortMask uint32

// Has reports whether port p is in the set.
func (m PortMask) Has(p int) bool { return p >= 0 && p < 32 && m&(1<<p) != 0 }

// Ports builds a mask from port numbers.
func Ports(ports ...int) PortMask {
	var m PortMask
	for _, p := range ports {
		m |= 1 << p
	}
	return m
}

func (m PortMask) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; m != 0; i++ {
		p := bits.TrailingZeros32(uint32(m))
		m &^= 1 << p
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(p))
	}
	b.WriteByte('}')
	return b.String()
}

// VLANMode is the switch-wide VLAN mode, as in etherswitch(8).
type VLANMode int

const (
	// ModeSingle: all ports in one port-VLAN group (the default). One
	// shared group, not one group per port: per-port groups with per-port
	// default VIDs split address learning and make the switch flood.
	ModeSingle VLANMode = iota
	// ModePort: per-port VLAN groups: group p lists the ports port p may
	// forward to (port isolation and port-based VLANs).
	ModePort
	// ModeDot1Q: 802.1Q VLANs with a PVID per port.
	ModeDot1Q
)

func (m VLANMode) String() string {
	switch m {
	case ModeSingle:
		return "single"
	case ModePort:
		return "port"
	case ModeDot1Q:
		return "dot1q"
	}
	return fmt.Sprintf("VLANMode(%d)", int(m))
}

// PortFlags are per-port settings.
type PortFlags uint32

const (
	// FlagIngressFilter drops 802.1Q frames whose VLAN the ingress port is
	// not a member of (802.1Q "secure" mode); without it only the VID must
	// exist ("check" mode). Set on every port when entering ModeDot1Q.
	FlagIngressFilter PortFlags = 1 << iota
	// FlagNoLearn disables address learning on the port.
	FlagNoLearn
	// FlagDisabled stops all forwarding to and from the port.
	FlagDisabled
	// FlagAddTag forces every frame leaving the port to be tagged.
	FlagAddTag
	// FlagStripTag forces every frame leaving the port to be untagged.
	FlagStripTag
)

// PortConfig is the writable per-port configuration.
type PortConfig struct {
	PVID  int // VLAN of untagged ingress frames in ModeDot1Q
	Flags PortFlags
}

// PortStatus is the port's link as reported by the switch.
type PortStatus struct {
	Link       bool
	SpeedMbps  int
	FullDuplex bool
	TXPause    bool
	RXPause    bool
	Auto       bool
}

// Port is what etherswitchcfg's "port" shows: configuration and status.
type Port struct {
	PortConfig
	Status PortStatus
	CPU    bool
	PHY    int // internal PHY address, -1 if none
	Label  string
}

// VLANGroup is one etherswitch VLAN group. In ModeDot1Q a group is an
// 802.1Q VLAN: VID plus members, each either tagged or untagged. In
// ModePort group p belongs to port p and Members are the ports p may
// forward to (VID and Untagged unused). In ModeSingle group 0 holds all
// ports and cannot be changed.
type VLANGroup struct {
	VID      int // 0 = group unused (ModeDot1Q)
	Members  PortMask
	Untagged PortMask // subset of Members
}

// Info describes the switch, as etherswitchcfg "info" does.
type Info struct {
	Chip           ChipID
	Revision       int
	Ports          int
	VLANGroups     int
	CPUPorts       PortMask
	PerVLANTagging bool // egress tagging may differ per VLAN on one port
	Board          string
}

// Config is what Attach needs.
type Config struct {
	Bus mdio.Bus
	// BuiltIn selects the AR7240/AR934x SoC-internal switch (page
	// register at PHY 0x1f reg 0x10, PHYs only via the MDIO master).
	BuiltIn bool
	// Board is the wiring; nil means CPU on port 0 over RGMII (GMII for
	// built-in switches) and the usual port→PHY map.
	Board *Board
	// Sleep waits; nil means time.Sleep. Models pass their virtual clock.
	Sleep func(time.Duration)
	// NoReset skips the soft reset (for re-attaching a running switch).
	NoReset bool
}

// Switch is an attached switch. Its methods are safe for concurrent use.
type Switch struct {
	mu    sync.Mutex
	io    regIO
	ops   chipOps
	board Board
	rev   int
	all   PortMask

	mode   VLANMode
	ports  []PortConfig
	groups []VLANGroup
	hw     *hwState // what was last programmed; nil forces a full load
	link   []bool
}

// idReads is how many times MASK_CTRL is read to accept an ID: OpenWrt
// reads 10 extra times and rejects a chip whose ID changes or reads all
// ones ([OW-8216] ar8xxx_id_chip).
const idReads = 11

// Attach identifies the switch behind cfg.Bus, resets and initialises it,
// and programs the default configuration: all ports in one group.
func Attach(cfg Config) (*Switch, error) { return attach(cfg, nil) }

// attach lets tests interpose on the register interface.
func attach(cfg Config, wrap func(regIO) regIO) (*Switch, error) {
	if cfg.Bus == nil {
		return nil, errors.New("arswitch: no MDIO bus")
	}
	sleep := cfg.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	pg := newPaged(cfg.Bus, pageLocFor(cfg.BuiltIn, ChipUnknown), sleep)
	var id0 uint32
	for i := 0; i < idReads; i++ {
		v, err := pg.read(regMaskCtrl)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			id0 = v
		}
		if v == 0xffffffff || v != id0 {
			return nil, fmt.Errorf("%w: read %#08x then %#08x", ErrUnstableID, id0, v)
		}
	}
	id, rev, err := identify(id0&0xffff, cfg.BuiltIn)
	if err != nil {
		return nil, err
	}
	pg.loc = pageLocFor(cfg.BuiltIn, id)
	var io regIO = pg
	if wrap != nil {
		io = wrap(io)
	}
	b := base{io: io, sleep: sleep}
	var ops chipOps
	switch id {
	case ChipAR8327, ChipAR8337:
		// Direct PHY access: FreeBSD found the MDIO master unreliable
		// on the AR8327 ([FB-8327] attach, [FB-PHY]
		// arswitch_readphy_external).
		ops = &ar8327{base: b, chip: id, rev: rev, phyIO: directPHY{pg}, layout: mibLayout8327}
	default:
		c := &ar8216{base: b, v: variants16[id], rev: rev}
		if cfg.BuiltIn {
			c.phyIO = masterPHY{io: io, reg: r16MDIOCtrl, sleep: sleep}
		} else {
			c.phyIO = directPHY{pg}
		}
		ops = c
	}
	var board Board
	switch {
	case cfg.Board != nil:
		board = cfg.Board.Clone()
	case cfg.BuiltIn:
		board = defaultBuiltIn.Clone()
	default:
		board = defaultRGMII.Clone()
	}
	if err := board.validate(id, ops.nports()); err != nil {
		return nil, err
	}
	if err := ops.checkBoard(&board); err != nil {
		return nil, err
	}
	s := &Switch{io: io, ops: ops, board: board, rev: rev,
		all: PortMask(1<<ops.nports() - 1), link: make([]bool, ops.nports())}
	if !cfg.NoReset {
		if err := ops.reset(); err != nil {
			return nil, err
		}
	}
	if err := ops.init(&s.board); err != nil {
		return nil, err
	}
	for p := 0; p < ops.nports(); p++ {
		if err := ops.initPort(p, &s.board); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.setModeLocked(ModeSingle); err != nil {
		return nil, err
	}
	if err := ops.atuFlush(); err != nil {
		return nil, err
	}
	return s, nil
}

// Info describes the switch.
func (s *Switch) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cpu PortMask
	for _, c := range s.board.CPU {
		cpu |= 1 << c.Port
	}
	return Info{Chip: s.ops.id(), Revision: s.rev, Ports: s.ops.nports(),
		VLANGroups: s.ngroups(), CPUPorts: cpu, PerVLANTagging: s.ops.perVLANTagging(),
		Board: s.board.Name}
}

func (s *Switch) ngroups() int {
	switch s.mode {
	case ModeSingle:
		return 1
	case ModePort:
		return s.ops.nports()
	}
	return s.ops.maxVLANs()
}

func (s *Switch) checkPort(p int) error {
	if p < 0 || p >= s.ops.nports() {
		return fmt.Errorf("%w: %d (switch has ports 0-%d)", ErrBadPort, p, s.ops.nports()-1)
	}
	return nil
}

// Port returns port p's configuration and link status.
func (s *Switch) Port(p int) (Port, error) {
	if err := s.checkPort(p); err != nil {
		return Port{}, err
	}
	st, err := s.PortStatus(p)
	if err != nil {
		return Port{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Port{PortConfig: s.ports[p], Status: st, CPU: s.board.isCPUPort(p), PHY: s.board.phyOf(p)}
	if p < len(s.board.Labels) {
		r.Label = s.board.Labels[p]
	}
	return r, nil
}

// SetPort changes port p's configuration.
func (s *Switch) SetPort(p int, c PortConfig) error {
	if err := s.checkPort(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ports := append([]PortConfig(nil), s.ports...)
	ports[p] = c
	return s.applyLocked(s.mode, ports, s.groups)
}

// VLANMode returns the current VLAN mode.
func (s *Switch) VLANMode() VLANMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetVLANMode switches mode and resets the groups to the mode's default:
// ModeSingle and ModePort let every port reach every other; ModeDot1Q
// starts with VLAN 1 holding every port untagged, PVID 1 and ingress
// filtering on every port. Learned addresses are flushed.
func (s *Switch) SetVLANMode(m VLANMode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.setModeLocked(m); err != nil {
		return err
	}
	return s.ops.atuFlush()
}

func (s *Switch) setModeLocked(m VLANMode) error {
	n := s.ops.nports()
	ports := make([]PortConfig, n)
	var groups []VLANGroup
	switch m {
	case ModeSingle:
		groups = []VLANGroup{{Members: s.all}}
	case ModePort:
		groups = make([]VLANGroup, n)
		for p := range groups {
			groups[p].Members = s.all
		}
	case ModeDot1Q:
		groups = make([]VLANGroup, s.ops.maxVLANs())
		groups[0] = VLANGroup{VID: 1, Members: s.all, Untagged: s.all}
		for p := range ports {
			ports[p].Flags = FlagIngressFilter
		}
	default:
		return fmt.Errorf("%w: unknown mode %d", ErrMode, int(m))
	}
	for p := range ports {
		ports[p].PVID = 1
	}
	// A mode change reprograms everything from a flushed VTU.
	old := s.hw
	s.hw = nil
	if err := s.applyLocked(m, ports, groups); err != nil {
		s.hw = old
		return err
	}
	return nil
}

// VLANGroup returns group i.
func (s *Switch) VLANGroup(i int) (VLANGroup, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.groups) {
		return VLANGroup{}, fmt.Errorf("%w: %d (mode %v has groups 0-%d)", ErrBadGroup, i, s.mode, len(s.groups)-1)
	}
	return s.groups[i], nil
}

// SetVLANGroup creates or changes group i ("vlangroup N vlan V members …").
func (s *Switch) SetVLANGroup(i int, g VLANGroup) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == ModeSingle {
		return fmt.Errorf("%w: the single group of mode %v is fixed", ErrMode, s.mode)
	}
	if i < 0 || i >= len(s.groups) {
		return fmt.Errorf("%w: %d (mode %v on %v has groups 0-%d)", ErrBadGroup, i, s.mode, s.ops.id(), len(s.groups)-1)
	}
	groups := append([]VLANGroup(nil), s.groups...)
	groups[i] = g
	return s.applyLocked(s.mode, s.ports, groups)
}

// DelVLANGroup removes 802.1Q group i.
func (s *Switch) DelVLANGroup(i int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode != ModeDot1Q {
		return fmt.Errorf("%w: groups can only be deleted in mode %v", ErrMode, ModeDot1Q)
	}
	if i < 0 || i >= len(s.groups) {
		return fmt.Errorf("%w: %d", ErrBadGroup, i)
	}
	groups := append([]VLANGroup(nil), s.groups...)
	groups[i] = VLANGroup{}
	return s.applyLocked(s.mode, s.ports, groups)
}

// PortStatus reads port p's status register.
func (s *Switch) PortStatus(p int) (PortStatus, error) {
	if err := s.checkPort(p); err != nil {
		return PortStatus{}, err
	}
	v, err := s.io.read(s.ops.portStatusReg(p))
	if err != nil {
		return PortStatus{}, err
	}
	return decodePortStatus(v), nil
}

func decodePortStatus(v uint32) PortStatus {
	st := PortStatus{
		Link:       v&portStatusLinkUp != 0,
		FullDuplex: v&portStatusDuplex != 0,
		TXPause:    v&portStatusTXFlow != 0,
		RXPause:    v&portStatusRXFlow != 0,
		Auto:       v&portStatusLinkAuto != 0,
	}
	switch v & portStatusSpeedMask {
	case portStatusSpeed10:
		st.SpeedMbps = 10
	case portStatusSpeed100:
		st.SpeedMbps = 100
	case portStatusSpeed1000:
		st.SpeedMbps = 1000
	}
	return st
}

// LinkChange reports a port whose link went up or down.
type LinkChange struct {
	Port int
	Up   bool
}

// PollLinks reads the link state of every PHY port and flushes the learned
// addresses of each port whose link went down, so a host that moves to
// another port is reachable at once instead of after aging (newer OpenWrt
// ar8xxx_check_link_states; FreeBSD flushes the whole table instead).
// Call it periodically (FreeBSD: once a second) or on a link interrupt.
func (s *Switch) PollLinks() ([]LinkChange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ch []LinkChange
	for p := 0; p < s.ops.nports(); p++ {
		if s.board.isCPUPort(p) || s.board.phyOf(p) < 0 {
			continue
		}
		v, err := s.io.read(s.ops.portStatusReg(p))
		if err != nil {
			return ch, err
		}
		up := v&portStatusLinkUp != 0
		if up == s.link[p] {
			continue
		}
		if !up {
			if err := s.ops.atuFlushPort(p); err != nil {
				return ch, err
			}
		}
		s.link[p] = up
		ch = append(ch, LinkChange{Port: p, Up: up})
	}
	return ch, nil
}

// FlushATU removes all learned addresses.
func (s *Switch) FlushATU() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops.atuFlush()
}

// FlushATUPort removes the addresses learned on port p.
func (s *Switch) FlushATUPort(p int) error {
	if err := s.checkPort(p); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops.atuFlushPort(p)
}

// ATU dumps the address table.
func (s *Switch) ATU() ([]ATUEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ATUEntry
	var prev ATUEntry
	// Bounded: a table that never reports its end is broken hardware.
	for i := 0; i <= s.ops.atuSize(); i++ {
		e, ok, err := s.ops.atuNext(prev)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, e)
		prev = e
	}
	return out, fmt.Errorf("%w: address table dump did not end after %d entries", ErrBadEntry, s.ops.atuSize())
}

// Counters captures and reads port p's MIB counters.
func (s *Switch) Counters(p int) (Counters, error) {
	if err := s.checkPort(p); err != nil {
		return Counters{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ops.mibCapture(); err != nil {
		return Counters{}, err
	}
	l := s.ops.mibLayout()
	words := make([]uint32, l.size/4)
	base := s.ops.mibBase(p)
	for i := range words {
		v, err := s.io.read(base + uint32(4*i))
		if err != nil {
			return Counters{}, err
		}
		words[i] = v
	}
	return parseMIB(l, words)
}

// ReadPHY reads a register of the internal PHY behind port p.
func (s *Switch) ReadPHY(p, reg int) (uint16, error) {
	phy, err := s.phyFor(p)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops.phy().readPHY(phy, reg)
}

// WritePHY writes a register of the internal PHY behind port p.
func (s *Switch) WritePHY(p, reg int, val uint16) error {
	phy, err := s.phyFor(p)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ops.phy().writePHY(phy, reg, val)
}

func (s *Switch) phyFor(p int) (int, error) {
	if err := s.checkPort(p); err != nil {
		return 0, err
	}
	phy := s.board.phyOf(p)
	if phy < 0 {
		return 0, fmt.Errorf("%w: port %d has no PHY", ErrBadPort, p)
	}
	return phy, nil
}

// PHYBus returns an mdio.Bus reaching the switch's internal PHYs at
// addresses 0-4 the way this chip needs (directly, or through the MDIO
// master register on the built-in switches), so a generic PHY driver
// (package mdio/phy) can manage them. Each transaction is serialised with
// the switch driver's own register sequences. It deliberately does not
// implement mdio.Locker: the underlying bus lock is taken per transaction.
func (s *Switch) PHYBus() mdio.Bus { return phyBus{s} }

type phyBus struct{ s *Switch }

func (b phyBus) check(phy, reg int) error {
	if err := mdio.CheckAddr(phy, reg); err != nil {
		return err
	}
	if phy > 4 {
		return fmt.Errorf("%w: switch PHYs are 0-4, not %d", mdio.ErrAddress, phy)
	}
	return nil
}

func (b phyBus) Read(phy, reg int) (uint16, error) {
	if err := b.check(phy, reg); err != nil {
		return 0, err
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.ops.phy().readPHY(phy, reg)
}

func (b phyBus) Write(phy, reg int, val uint16) error {
	if err := b.check(phy, reg); err != nil {
		return err
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.ops.phy().writePHY(phy, reg, val)
}

// ReadReg reads a raw switch register (etherswitchcfg "reg").
func (s *Switch) ReadReg(addr uint32) (uint32, error) { return s.io.read(addr) }

// WriteReg writes a raw switch register. The driver's cached view of the
// VLAN setup is not updated: this is a debugging aid.
func (s *Switch) WriteReg(addr, val uint32) error { return s.io.write(addr, val) }
