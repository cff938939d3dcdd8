// Package axge drives ASIX's USB 3.0/2.0 gigabit Ethernet chips — the
// AX88179, its AX88179A revision and the AX88178A — behind gowrt's NIC
// contract, through the USB core (usbnet/usb) and the usbnet framework.
// Facts come from FreeBSD's if_axge.c / if_axgereg.h and Linux's
// ax88179_178a.c; FreeBSD's driver went from 57 to 979 Mbit/s through
// four fixes, and each is built in here:
//
//   - RX_BULKIN_QCTRL is programmed on every link change from the table,
//     by link speed and USB speed (PLSR), not left at its power-on value
//     (Chip.statchg; TestHazardAggregationTimer);
//   - four bulk-in transfers are in flight (Driver; TestHazardRxInFlight);
//   - a frame whose length plus its 8-byte header fills whole bulk-out
//     packets carries the PAD flag and a byte the chip drops, so the
//     transfer ends with a short packet (Framing.EncodeTx;
//     TestHazardTxPadding);
//   - a failed register read returns an error and its buffer is never
//     used (Chip.control; TestHazardControlReadError).
//
// A fifth: the MII passes (Tick, MediaChange, StatChange) exclude each
// other for their whole length although every register access sleeps, so
// none sees another's half-built media word (Chip; TestHazardMIITear,
// -tags gowrt_hazard).
//
// Received transfers are parsed from their trailer with every count and
// offset checked against the transfer (Framing.DecodeRx, FuzzDecodeRx):
// the out-of-bounds read of CVE-2022-2964 cannot happen.
//
// The hostile chip model the tests run against is usbnet/axge/axgesim.
package axge
