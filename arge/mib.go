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

// mibDrops are the MIB counters UpdateMIB accumulates, by index in MIB.
var mibDrops = [...]int{
	20, 22, // rx_oversize, rx_jabber
	19, 21, // rx_undersize, rx_fragments
	9, 15, 17, // rx_fcs_errors, rx_alignment_errors, rx_code_errors
	23, // rx_dropped
}

// Errors.
// UpdateMIB adds what the MAC's MIB drop counters counted since the last
// call to the drop fields of Stats (RxOversize, RxUndersize, RxErrors,
// RxDropped). The registers are 12 bits wide and wrap: call it more often
// than 4096 such drops can happen (the NIC calls it at every MIB poll and
// from Counters).
func (d *Driver) UpdateMIB() {
	d.mibMu.Lock()
	defer d.mibMu.Unlock()
	d.updateMIB()
}

// updateMIB is UpdateMIB with mibMu held. The first call after New or a
// MAC reset only records the counters' values: what they held before
// counts nothing.
func (d *Driver) updateMIB() {
	d.r.Barrier()
	var delta [len(mibDrops)]uint64
	for i, k := range mibDrops {
		v := d.readMIB(k)
		delta[i] = uint64((v - d.mibLast[i]) & (1<<MIB[k].Bits - 1))
		d.mibLast[i] = v
	}
	if !d.mibBase {
		d.mibBase = true
		return
	}
	d.Stats.RxOversize.Add(delta[0] + delta[1])
	d.Stats.RxUndersize.Add(delta[2] + delta[3])
	d.Stats.RxErrors.Add(delta[4] + delta[5] + delta[6])
	d.Stats.RxDropped.Add(delta[7])
}

func (d *Driver) readMIB(k int) uint32 {
	return d.r.Read32(MIB[k].Off) & (1<<MIB[k].Bits - 1)
}

// MIBCounters reads every MIB register into dst (len(dst) ≥ len(MIB)),
// masked to its field width.
func (d *Driver) MIBCounters(dst []uint32) {
	d.r.Barrier()
	for i, c := range MIB {
		if i >= len(dst) {
			return
		}
		dst[i] = d.r.Read32(c.Off) & (1<<c.Bits - 1)
	}
}
