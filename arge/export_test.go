package arge

// RXBuffersOwnedByHardware counts RX descriptors currently handed to the
// MAC (EMPTY set): after the driver has caught up, all of them.
func RXBuffersOwnedByHardware(d *Driver) int {
	d.rxMu.Lock()
	defer d.rxMu.Unlock()
	n := 0
	for i := 0; i < d.rxN; i++ {
		if d.ring.Read32(d.rxDesc(i)+DescCtrl)&DescEmpty != 0 {
			n++
		}
	}
	return n
}
