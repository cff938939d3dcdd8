//go:build (mips || mipsle) && !gowrt_hazard

package kernel

// The shipped kernel has no hazard-injection hooks: the functions below are
// empty, so they inline to nothing and the Compare path carries no test
// switch. Kernels built with -tags gowrt_hazard get the hooks instead
// (hazard_on_mipsx.go); the boot tests build such an image to show that the
// guard in arm is needed.

type hazardState struct{}

//go:nosplit
func (k *kstate) hazardLateWrite(deadline int64) bool { return false }

//go:nosplit
func (k *kstate) hazardHold(c uint32) {}

//go:nosplit
func (k *kstate) hazardTrustWrite() bool { return false }

//go:nosplit
func (k *kstate) hazardPlainSlice() bool { return false }

//go:nosplit
func (k *kstate) hazardSyscall(fr *frame, t *thread, nr, op, arg uint32) bool { return false }

//go:nosplit
func (k *kstate) hazardToken(a, n uintptr) bool { return false }

//go:nosplit
func isHazardToken(a, n uintptr) bool { return false }
