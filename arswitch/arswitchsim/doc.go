// Package arswitchsim models the Atheros/QCA Ethernet switches driven by
// package arswitch — AR8216, AR8316, AR8327/AR8337 and the AR7240/AR934x
// built-in switch — at two levels:
//
//   - Registers, as seen through MDIO: the page register (PHY 0x18 reg 0,
//     or PHY 0x1f reg 0x10 on the built-in switches), the settle time after
//     a page change, 32-bit registers split into two 16-bit halves that are
//     committed by the second half in each chip's order, VTU/ATU/MIB/MDIO-
//     master operations that stay busy for a while and complete lazily,
//     soft reset, the AR934x's PORT_VLAN/PORT_VLAN2 split, a read latch (reading the low half captures the whole
//     register for the high-half read that follows), and the internal PHYs (directly on the bus for external
//     chips, through the MDIO master register for all).
//   - Frames: ports with link state, learning and aging address table
//     (shared on the AR8216 family, per VLAN on the AR8327), flooding under
//     the flood masks, port-based and 802.1Q VLAN classification with the
//     ingress modes, egress tagging per port (AR8216 family) or per port
//     per VLAN (AR8327), MIB counters. Frames are injected at a port with
//     Inject and delivered to the egress function of each output port.
//
// Hazards reproduced (each has a TestHazard test in package arswitch):
//
//   - Half-write order: the latched first half is committed with whatever
//     the second half is, so writing AR8327 registers high-half-first (or
//     AR8216 registers low-half-first) reads back wrong.
//   - Page settle: an access less than PageSettle after a page write still
//     goes to the old page.
//   - Unlocked paged access: one write latch for the whole chip, so two
//     interleaved 32-bit writes corrupt each other.
//   - Operations started while the unit is busy are ignored; results read
//     before completion are stale.
//   - Stale address-table entries after a link change: the chip does not
//     flush on its own, frames to a moved host go to the dead port.
//   - Per-port default VIDs on the AR8327 put learned addresses in
//     different VLANs, so unicast never hits and floods.
//   - Register-level checks: writes setting bits the upstream register
//     headers do not define for a register, or invalid field values (port
//     state > 4), are recorded as violations (the AR934x bring-up RMW that
//     always set bit 0).
//
// Modelling choices not fixed by the upstream drivers are marked "model:"
// in the code; the main ones: VTU member masks are ANDed with the port-VLAN
// destination mask, flood-mask reset values flood everywhere, the AR8327
// keys learning by the classified VID whether or not a VTU entry exists,
// the ATU is 4-way set-associative with this package's own hash.
//
// The per-frame path (Inject) allocates nothing; egress functions receive
// a buffer valid only during the call and must not call back into the
// same Switch.
package arswitchsim
