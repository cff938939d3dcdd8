// Package idle is the race-free idle loop of the bare-metal kernel.
//
// The idle loop must check "is there work?" with interrupts disabled, then
// enable interrupts and sleep. MIPS has no atomic "enable interrupts and
// WAIT", so an interrupt that arrives between the enable and the WAIT could
// make work runnable and still be slept through until some later interrupt.
// Following the FreeBSD/Linux (2025) skip-over scheme, the enable, the
// "work pending" branch and the WAIT sit in one 16-byte aligned window; the
// kernel's exception entry rounds EPC down to 16 bytes and, if it equals the
// window, resumes at the window's end instead of at the WAIT. The caller then
// re-checks for work.
//
// The loop is position-independent machine code that the kernel copies to a
// 16-byte aligned address in low memory at boot (the Go toolchain has no
// alignment directive for mips), so this package only describes it: the code
// words, where the window is inside them, and the contract of the registers.
// The loop runs as the kernel's idle context with:
//
//	R4 = address of a word that is nonzero when work is runnable
//	R5 = the system-call number the loop issues to give up the CPU
//
// The same code serves as the deliberately naive idle in tests: if the
// kernel does not register the window for skip-over, an interrupt inside it
// returns to the WAIT and the wake-up is lost until the next interrupt.
package idle

// Window layout inside Code, in bytes from its start.
const (
	// WindowOffset is where the 16-byte window starts. The kernel places
	// the code so that start+WindowOffset is 16-byte aligned.
	WindowOffset = 28
	// WindowSize is the size of the window (FreeBSD checks the same 16).
	WindowSize = 16
)

// Code is the idle loop as MIPS32 instruction words (stored in the CPU's
// byte order, so the same words serve both endians).
//
//	loop:   mfc0  v1, Status
//	        addiu t0, zero, -2
//	        and   v0, v1, t0
//	        mtc0  v0, Status         # interrupts off
//	        ehb
//	        lw    a3, 0(a0)          # work pending? (checked with interrupts off)
//	        ori   v1, v1, 1
//	window: mtc0  v1, Status         # +28: interrupts on
//	        bne   a3, zero, out      # work was pending: do not sleep
//	        nop
//	        wait
//	        nop                      # +44: an interrupt inside the window, or one
//	                                 # that ends the WAIT, resumes here
//	out:    lw    a3, 0(a0)          # +48
//	        beq   a3, zero, loop
//	        nop
//	        addu  v0, a1, zero
//	        syscall                  # give up the CPU to the runnable work
//	        beq   zero, zero, loop
//	        nop
//
// An interrupt that becomes pending after the check is taken as soon as the
// mtc0 enables interrupts, i.e. inside the window, and the kernel resumes at
// the window's end, which falls through to "out" and re-reads the flag.
//
// The nop after the WAIT keeps "out" off the WAIT's return address: an
// interrupt taken at the window's end can then only have ended a WAIT,
// which is how the kernel counts lost wake-ups exactly (one taken at
// "out" after the branch is not one).
var Code = [...]uint32{
	0x40036000, // mfc0 v1, $12
	0x2408fffe, // addiu t0, zero, -2
	0x00681024, // and v0, v1, t0
	0x40826000, // mtc0 v0, $12
	0x000000c0, // ehb
	0x8c870000, // lw a3, 0(a0)
	0x34630001, // ori v1, v1, 1
	0x40836000, // window: mtc0 v1, $12
	0x14e00003, // bne a3, zero, out
	0x00000000, // nop
	0x42000020, // wait
	0x00000000, // nop
	0x8c870000, // out: lw a3, 0(a0)
	0x10e0fff2, // beq a3, zero, loop
	0x00000000, // nop
	0x00a01021, // addu v0, a1, zero
	0x0000000c, // syscall
	0x1000ffee, // beq zero, zero, loop
	0x00000000, // nop
}

// Placement returns where to copy Code inside a free area starting at base so
// that the window is 16-byte aligned, and the window's address.
func Placement(base uintptr) (start, window uintptr) {
	window = (base + WindowOffset + WindowSize - 1) &^ (WindowSize - 1)
	return window - WindowOffset, window
}
