// Package layering holds tests of gowrt's import rules: which packages a
// package may link, checked with `go list -deps` for the firmware's
// target (GOOS=linux, GOARCH=mips and mipsle, GOMIPS=softfloat), so a
// change that breaks a rule fails `make test` instead of surfacing as a
// driver that links the kernel or a chipset it never runs on.
//
// The rules are those of docs/architecture.md, section 3:
//
//   - The NIC contract (package net) is a leaf: it imports nothing but the
//     standard library.
//   - A MAC driver (arge, pcnet) and the software bridge link neither the
//     kernel, nor a board's chipset code (soc/malta), nor gVisor's stack.
//   - The kernel knows no board: it imports no soc or board package (a
//     SoC package provides the kernel's platform hooks instead).
//   - Boards wire, drivers don't: arge links no PHY driver (mdio/phy),
//     the board polls the PHY and tells the NIC the link; and no SoC
//     package (soc/ar71xx), the board hands it the SoC's Ethernet unit.
//   - Models don't trust drivers: argesim, pcnetsim, arswitchsim and
//     cfisim do not link their drivers (they keep their own register
//     facts).
//   - The router's packet and rule engines (net/nat, config/uci,
//     net/firewall, sys/event) link only the standard library (and the
//     firewall config/uci); net/forward links gVisor's buffers, not its
//     stack or the kernel.
//   - Shipped code carries no test switches: internal/wrongcode, whose
//     wrapped contracts make a driver commit the mistakes its hazard tests
//     catch, is imported by tests only.
//
// The package has no code of its own; it exists for its tests, which run
// on the build host (they run the go command).
package layering
