package malta

// CountHz returns the CP0 Count frequency. QEMU's malta runs Count at a
// known rate (qemuCountHz), so one 0.25 ms window against the i8254
// (PITHz) only confirms it: boot spends 0.25 ms calibrating instead of
// 10 ms. A window more than confirmTolerance off that rate (another QEMU
// version, real hardware, or the host stalling the emulator mid-window)
// is settled the long way: the median of five 2 ms windows, so one
// host-scheduling hiccup under emulation does not skew the clock. Linux
// calibrates the same counter against the RTC instead
// (arch/mips/mti-malta/malta-time.c), which takes a second or more. It
// runs at boot, before the kernel takes traps.
//
//go:nosplit
func CountHz() uint32 {
	PITStart()
	hz, ok := countWindow(PITHz / 4000)
	if !ok {
		return qemuCountHz // no PIT answered
	}
	if d := int64(hz) - qemuCountHz; d*confirmTolerance < qemuCountHz && -d*confirmTolerance < qemuCountHz {
		return qemuCountHz
	}
	return measuredCountHz()
}

// confirmTolerance: a 0.25 ms window confirms the known rate if it is
// within 1/100 (1 %) of it. The window's own error is one PIT tick in
// 298 (0.34 %) plus the PIT reads' latency; the rates QEMU versions have
// used differ by far more (100, 166.7, 200 MHz). What is returned is the
// exact known rate, not the window's estimate.
const confirmTolerance = 100

// measuredCountHz is the median of five 2 ms windows.
//
//go:nosplit
func measuredCountHz() uint32 {
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
