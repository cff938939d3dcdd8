// Package boottest boots Malta board test images under QEMU
// (qemu-system-mips and qemu-system-mipsel, -M malta): PCI enumeration
// through the GT-64120, the CFI flash driver against QEMU's pflash, and the
// configuration store surviving reboots with the flash file preserved.
// The tests only exist on the host (they need qemu-system).
package boottest
