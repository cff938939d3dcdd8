// Package netstack runs gVisor's TCP/IP stack (gvisor.dev/gvisor/pkg/tcpip)
// on gowrt NICs: Endpoint adapts any net.NIC to a gVisor
// stack.LinkEndpoint, Ethernet framing included, so the firmware's own
// services (HTTP, and later SSH, DHCP, DNS) run on gVisor's netstack.
//
// It sits above the NIC contract (package net), which knows nothing of
// gVisor: a MAC driver links this package, the stack and the kernel's
// clock only when a program puts a stack on it.
//
// StackClock and Nanotime are the clocks for that stack and for per-frame
// timestamps beside it: on the gowrt kernel they read the CPU's counter
// directly instead of making a system call per read.
package netstack
