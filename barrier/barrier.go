// Package barrier provides memory and execution-hazard barriers, and Space:
// the ordered register-access interface every gowrt driver uses for MMIO.
//
// Barriers map to the instructions the architectures define:
//
//	         Full            Read            Write           Hazard
//	mips     SYNC            SYNC            SYNC            EHB (sll $0,$0,3 = 0x000000c0)
//	arm      DMB ISH + DSB   DMB ISH         DMB ISHST       ISB
//	arm64    DMB ISH + DSB   DMB ISHLD       DMB ISHST       ISB
//	other    sequentially consistent atomic (host builds and tests)
//
// MIPS32 SYNC (stype 0) is a completion barrier: every load and store before
// it completes before any after it; Linux uses it for mb, rmb and wmb alike on
// 24K/74K cores (arch/mips/include/asm/sync.h). EHB clears execution hazards,
// e.g. between an MTC0 and an instruction that depends on it (MIPS32 R2).
//
// Register accesses through a Space are relaxed: two accesses are ordered
// with respect to each other only if a Space.Barrier separates them. On the
// AR934x an MDIO poll loop without a barrier read the previous transaction's
// value; the hwsim MMIO bus reproduces that, so a missing Barrier fails tests.
package barrier

// Full orders all earlier memory accesses (normal and device) before all
// later ones and waits for earlier stores to complete.
func Full() { full() }

// Read orders earlier loads before later loads.
func Read() { read() }

// Write orders earlier stores before later stores.
func Write() { write() }

// Hazard clears execution hazards (EHB on MIPS32 R2, ISB on ARM); use it
// after writing a control register whose effect later instructions depend on.
func Hazard() { hazard() }
