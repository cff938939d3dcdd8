package malta

// CountHz measures the CP0 Count frequency against the i8254 (PITHz): the
// median of five 2 ms windows, so one host-scheduling hiccup under
// emulation does not skew the clock. Linux calibrates the same counter
// against the RTC instead (arch/mips/mti-malta/malta-time.c), which takes
// a second or more; the PIT needs 10 ms. It runs at boot, before the
// kernel takes traps.
//
//go:nosplit
func CountHz() uint32 {
	PITStart()
	var r [5]uint32
	for w := 0; w < len(r); w++ {
		hz, ok := countWindow(PITHz / 500)
		if !ok {
			return qemuCountHz // no PIT answered
		}
		// insertion sort
		i := w
		for ; i > 0 && r[(i-1)%5] > hz; i-- {
			r[i%5] = r[(i-1)%5]
		}
		r[i%5] = hz
	}
	return r[2]
}

// qemuCountHz is QEMU 7.2's Count rate on malta: one tick every 6 ns
// (target/mips/cpu.c truncates the 6.25 ns of its 320 MHz clock with
// CCRes 2).
const qemuCountHz = 166_666_667

// countWindow counts Count ticks while the PIT counts down want ticks.
//
//go:nosplit
func countWindow(want uint32) (uint32, bool) {
	prev := PITRead()
	c0 := readCount()
	elapsed := uint32(0)
	for i := 0; i < 10_000_000 && elapsed < want; i++ {
		cur := PITRead()
		elapsed += uint32(uint16(prev - cur))
		prev = cur
	}
	c1 := readCount()
	if elapsed < want {
		return 0, false
	}
	return uint32(uint64(c1-c0) * PITHz / uint64(elapsed)), true
}
