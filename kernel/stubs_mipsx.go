//go:build mips || mipsle

package kernel

// Implemented in asm_mipsx.s.

// Entry is the image's entry point (-E github.com/gowrt/gowrt/kernel.Entry).
func Entry()

func tlbRefill()
func trapEntry()
func sigreturnTramp()
func addrs() (refill, general, sigret uintptr)
func readCount() uint32
func fastMono() (sec, nsec uint32, ok bool)
func writeCompare(v uint32)
func readStatus() uint32
func writeStatus(v uint32)
func readCause() uint32
func writeCause(v uint32)
func tlbInit(n uint32)
func tlbInvalidate(va uintptr)
func syncICache(addr, n uintptr)
func waitForever()
func readConfig1() uint32
func readConfig() uint32
func dcacheWbInv(addr, n uintptr)

// setCacheK0 is called by Entry only, through its kseg1 alias (it returns
// the loader's Config in R2, outside the Go calling convention).
func setCacheK0()
func bssEnd() uintptr

// atomicXadd64PC returns the address of internal/runtime/atomic.Xadd64
// (pushed by atomic_mipsx.go's //go:linkname, so the linker allows the
// reference; see atomiclock_mipsx.go).
func atomicXadd64PC() uintptr
