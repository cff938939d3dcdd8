package arswitch

import (
	"errors"
	"fmt"
	"net"
)

// ErrBadEntry is returned when the chip hands back an address-table entry
// that cannot be valid (a port bitmap naming ports the chip lacks).
var ErrBadEntry = errors.New("arswitch: malformed address table entry from chip")

// ATUEntry is one address-table (ATU) entry.
type ATUEntry struct {
	MAC    [6]byte
	VID    int      // AR8327: the entry's VLAN (independent VLAN learning); 0 on the AR8216 family
	Ports  PortMask // destination ports
	Static bool
	// Age is the dynamic entry's aging status, 7 (fresh) down to 1.
	Age int
}

func (e ATUEntry) String() string {
	kind := fmt.Sprintf("age %d", e.Age)
	if e.Static {
		kind = "static"
	}
	return fmt.Sprintf("%s vid %d ports %v %s", net.HardwareAddr(e.MAC[:]), e.VID, e.Ports, kind)
}

// decodeATU16 parses an AR8216-family get-next result from ATU (0x50),
// ATU_DATA (0x54) and ATU_CTRL2 (0x58). ok is false when the status says
// the table end was reached. Input comes from hardware: anything malformed
// is an error, never a panic.
func decodeATU16(atu, data, ctrl2 uint32, nports int) (ATUEntry, bool, error) {
	status := int(ctrl2>>atuCtrl2StatusShift) & atuCtrl2StatusMask
	if status == 0 {
		return ATUEntry{}, false, nil
	}
	var e ATUEntry
	e.MAC = [6]byte{byte(data >> 24), byte(data >> 16), byte(data >> 8), byte(data),
		byte(atu >> atuAddr4Shift), byte(atu >> atuAddr5Shift)}
	ports := ctrl2 & atuCtrl2PortsMask
	if ports>>uint(nports) != 0 {
		return ATUEntry{}, false, fmt.Errorf("%w: port bitmap %#x on a %d-port switch", ErrBadEntry, ports, nports)
	}
	e.Ports = PortMask(ports)
	setStatus(&e, status)
	return e, true, nil
}

// decodeATU27 parses an AR8327 get-next result from ATU_DATA0..2.
func decodeATU27(d0, d1, d2 uint32) (ATUEntry, bool, error) {
	status := int(d2 & atu27StatusMask)
	if status == 0 {
		return ATUEntry{}, false, nil
	}
	var e ATUEntry
	e.MAC = [6]byte{byte(d1 >> 8), byte(d1), byte(d0 >> 24), byte(d0 >> 16), byte(d0 >> 8), byte(d0)}
	e.VID = int(d2>>atu27VIDShift) & 0xfff
	ports := d1 >> atu27PortsShift & atu27PortsMask
	e.Ports = PortMask(ports)
	setStatus(&e, status)
	return e, true, nil
}

func setStatus(e *ATUEntry, status int) {
	if status == atuStatusStatic {
		e.Static = true
		return
	}
	// 1-7 dynamic ages; 8-14 are not defined by [FB-REG]: report them
	// as the freshest dynamic age rather than fail the whole dump.
	e.Age = min(status, 7)
}
