//go:build !mips && !mipsle

package mipsdma

// On other architectures the package builds (for vet and docs) but has no
// caches to drive: New fails because Config1 reads as "no D-cache".

func readConfig1() uint32                      { return 0 }
func hitWriteback(start, end, line uintptr)    {}
func hitInvalidate(start, end, line uintptr)   {}
func hitWritebackInv(start, end, line uintptr) {}
