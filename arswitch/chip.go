package arswitch

import (
	"errors"
	"fmt"
)

// ChipID names a supported switch.
type ChipID int

const (
	ChipUnknown ChipID = iota
	ChipAR8216
	ChipAR8316
	ChipAR8327
	ChipAR8337
	ChipAR7240 // built-in switch of the AR7240/AR7241/AR7242
	ChipAR934x // built-in switch of the AR9341/AR9342/AR9344
)

func (c ChipID) String() string {
	switch c {
	case ChipAR8216:
		return "AR8216"
	case ChipAR8316:
		return "AR8316"
	case ChipAR8327:
		return "AR8327"
	case ChipAR8337:
		return "AR8337"
	case ChipAR7240:
		return "AR7240"
	case ChipAR934x:
		return "AR934x"
	}
	return fmt.Sprintf("ChipID(%d)", int(c))
}

// Identification errors.
var (
	ErrUnknownChip = errors.New("arswitch: unsupported switch ID")
	ErrUnstableID  = errors.New("arswitch: switch ID register unstable (no switch, or MDIO broken)")
)

// identify maps MASK_CTRL to a chip. The version field is ambiguous between
// external and built-in switches (0x01 is AR8216 or AR7240, 0x02 AR8226 or
// AR934x), so the caller says which kind it attaches, as FreeBSD's
// is_7240/is_9340 hints do ([FB-7240], [FB-9340]; version values from
// [OW-8216], [OW-7240] and [FB-SW]'s probe).
func identify(maskCtrl uint32, builtIn bool) (ChipID, int, error) {
	ver := int(maskCtrl>>maskCtrlVerShift) & maskCtrlVerMask
	rev := int(maskCtrl) & maskCtrlRevMask
	if builtIn {
		switch ver {
		case 0x01:
			return ChipAR7240, rev, nil
		case 0x02:
			return ChipAR934x, rev, nil
		}
	} else {
		switch ver {
		case 0x01:
			return ChipAR8216, rev, nil
		case 0x10:
			return ChipAR8316, rev, nil
		case 0x12:
			return ChipAR8327, rev, nil
		case 0x13:
			return ChipAR8337, rev, nil
		}
	}
	kind := "external"
	if builtIn {
		kind = "built-in"
	}
	// AR8226 (0x02) and AR8236 (0x03) exist but are not supported here.
	return ChipUnknown, rev, fmt.Errorf("%w: %s switch MASK_CTRL %#08x (version %#02x revision %#02x)",
		ErrUnknownChip, kind, maskCtrl, ver, rev)
}

// pageLocFor returns where the page register is for a kind of switch, and
// the half-write order (known only after identification; reads are always
// low then high, so identification works before it is known).
func pageLocFor(builtIn bool, id ChipID) pageLoc {
	if builtIn {
		return pageLoc{phy: pagePHYBuiltIn, reg: pageRegBuiltIn}
	}
	return pageLoc{phy: pagePHYExternal, reg: pageRegExternal,
		loFirst: id == ChipAR8327 || id == ChipAR8337}
}

// egressMode is the hardware egress tagging decision for one port.
type egressMode int

const (
	egressAsReceived egressMode = iota // AR8216 "keep" / AR8327 "untouched"
	egressUntag                        // strip any tag
	egressTag                          // add a tag with the frame's VID
	egressPerVLAN                      // AR8327 only: the VTU entry decides per port
)

// portHW is the chip-independent image of one port's forwarding setup that
// the VLAN code computes and the chip code turns into registers.
type portHW struct {
	state  int      // portState*
	learn  bool     // address learning
	pvid   int      // default VID for untagged ingress
	dest   PortMask // ports this port may forward to (port-VLAN mask)
	dot1q  int      // dot1q* ingress mode
	egress egressMode
}

// vtuEntry is one VLAN as programmed into the VTU.
type vtuEntry struct {
	vid      int
	members  PortMask
	untagged PortMask // AR8327: per-port egress untag; ignored by AR8216 family
}

// chipOps is the per-chip operations table: everything that differs between
// the AR8216-family layout and the AR8327 layout, or between the variants of
// the AR8216 family, is behind it. Selected once from the ID register.
type chipOps interface {
	id() ChipID
	nports() int
	// maxVLANs is how many 802.1Q VLAN groups the VTU holds.
	maxVLANs() int
	// perVLANTagging reports whether egress tagging can differ per VLAN
	// on one port (AR8327) or only per port (AR8216 family).
	perVLANTagging() bool
	// checkBoard rejects board data the chip cannot implement, before
	// anything is written.
	checkBoard(b *Board) error
	// init does the chip-global setup after reset, including the board's
	// CPU port mode and LEDs.
	init(b *Board) error
	// initPort does the per-port setup independent of VLANs: forced link
	// on CPU ports, autonegotiation on PHY ports, no Atheros header.
	initPort(p int, b *Board) error
	portStatusReg(p int) uint32
	writePort(p int, h portHW) error
	vtuFlush() error
	vtuLoad(e vtuEntry) error
	vtuPurge(vid int) error
	// vtuNext returns the VTU entry with the smallest VID above vid;
	// ok is false when there is none.
	vtuNext(vid int) (e vtuEntry, ok bool, err error)
	atuFlush() error
	atuFlushPort(p int) error
	// atuNext returns the entry after prev (zero value: the first);
	// ok is false at the end of the table.
	atuNext(prev ATUEntry) (e ATUEntry, ok bool, err error)
	atuSize() int
	mibCapture() error
	mibLayout() *mibLayout
	mibBase(p int) uint32
	phy() phyIO
	// reset soft-resets the chip and waits for it to come back.
	reset() error
}
