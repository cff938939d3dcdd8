// Package boottest boots firmware images under qemu-system-mips(el) -M malta
// and checks what they print. It has no code of its own: its tests run on the
// host only (they start QEMU system emulation), so the qemu-mips test run
// skips them by construction.
package boottest
