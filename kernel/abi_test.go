package kernel

import "testing"

// Every private call and every call the runtime needs must be classified,
// and refused calls must carry an errno.
func TestClassify(t *testing.T) {
	for _, nr := range []uint32{sysClockGettime, sysFutexTime64, sysMmap, sysMunmap, sysMadvise, sysClone,
		sysEpollPwait, sysEventfd2, sysRtSigaction, sysTgkill, sysGowrtInfo, sysGowrtIRQWait,
		sysClockSettime, sysClockSettime64, sysClockAdjtime, sysClockAdjtime64} {
		if d, _ := Classify(nr); d != Handled {
			t.Errorf("%d not handled", nr)
		}
	}
	for nr := uint32(firstLinuxSyscall); nr <= lastTrackedSyscall+500; nr++ {
		d, errno := Classify(nr)
		if d != Handled && errno == 0 {
			t.Errorf("%d: disposition %d without an errno", nr, d)
		}
	}
	if d, e := Classify(sysOpenat); d != Refused || e != eNOENT {
		t.Errorf("openat: %d %d", d, e)
	}
	if d, e := Classify(4499); d != Unknown || e != eNOSYS {
		t.Errorf("4499: %d %d", d, e)
	}
}
