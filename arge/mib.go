package arge

// MIBCounter is one hardware statistics register: its offset and the width
// of its counter field (the upper bits read as garbage).
type MIBCounter struct {
	Name string
	Off  uint32
	Bits uint8
}

// MIB lists the MAC's statistics registers (offsets and field widths from
// Linux ag71xx.c's ethtool statistics table). The counters saturate or wrap
// at their width; Stats masks them.
var MIB = [...]MIBCounter{
	{"tx_rx_64", 0x080, 18},
	{"tx_rx_65_127", 0x084, 18},
	{"tx_rx_128_255", 0x088, 18},
	{"tx_rx_256_511", 0x08C, 18},
	{"tx_rx_512_1023", 0x090, 18},
	{"tx_rx_1024_1518", 0x094, 18},
	{"tx_rx_1519_1522", 0x098, 18},
	{"rx_bytes", 0x09C, 24},
	{"rx_packets", 0x0A0, 18},
	{"rx_fcs_errors", 0x0A4, 12},
	{"rx_multicast", 0x0A8, 18},
	{"rx_broadcast", 0x0AC, 22},
	{"rx_control", 0x0B0, 18},
	{"rx_pause", 0x0B4, 12},
	{"rx_unknown_opcode", 0x0B8, 12},
	{"rx_alignment_errors", 0x0BC, 12},
	{"rx_length_errors", 0x0C0, 16},
	{"rx_code_errors", 0x0C4, 12},
	{"rx_carrier_sense_errors", 0x0C8, 12},
	{"rx_undersize", 0x0CC, 12},
	{"rx_oversize", 0x0D0, 12},
	{"rx_fragments", 0x0D4, 12},
	{"rx_jabber", 0x0D8, 12},
	{"rx_dropped", 0x0DC, 12},
	{"tx_bytes", 0x0E0, 24},
	{"tx_packets", 0x0E4, 18},
	{"tx_multicast", 0x0E8, 18},
	{"tx_broadcast", 0x0EC, 18},
	{"tx_pause", 0x0F0, 12},
	{"tx_deferral", 0x0F4, 12},
	{"tx_excessive_deferral", 0x0F8, 12},
	{"tx_single_collision", 0x0FC, 12},
	{"tx_multiple_collision", 0x100, 12},
	{"tx_late_collision", 0x104, 12},
	{"tx_excessive_collision", 0x108, 12},
	{"tx_total_collision", 0x10C, 13},
	{"tx_pause_honored", 0x110, 12},
	{"tx_dropped", 0x114, 12},
	{"tx_jabber", 0x118, 12},
	{"tx_fcs_errors", 0x11C, 12},
	{"tx_control", 0x120, 12},
	{"tx_oversize", 0x124, 12},
	{"tx_undersize", 0x128, 12},
	{"tx_fragments", 0x12C, 12},
}

// Indexes into MIB of the counters the driver uses itself.
const (
	MIBRXBytes   = 7
	MIBRXPackets = 8
	MIBTXBytes   = 24
	MIBTXPackets = 25
)
