// Package sysupgrade writes a new firmware image into a router's flash from
// the running firmware, as OpenWrt's sysupgrade does: the image is signed,
// checked completely before the first erase, written block by block with a
// read-back of every block, and the configuration partition is kept or (with
// Options.KeepConfig false, OpenWrt's "sysupgrade -n") erased.
//
// # Upgrade image format (version 1)
//
// All integers are big-endian.
//
//	offset    size  field
//	0         8     magic "GOWRTUPG"
//	8         2     format version (1)
//	10        2     metadata length M (MinMetadata..MaxMetadata)
//	12        M     metadata (below)
//	12+M      64    ed25519 signature of bytes [0, 12+M): header and metadata
//	76+M      S     firmware: what the bootloader boots from the firmware
//	                partition (for U-Boot boards, a legacy uImage); opaque here
//
// Metadata, exactly M bytes:
//
//	1    board name length B (1..MaxName)
//	B    board name, printable ASCII without spaces (e.g. "tl-wdr4300")
//	1    version length V (1..MaxName)
//	V    version, printable ASCII without spaces
//	8    firmware size S (1..MaxFirmware)
//	32   SHA-256 of the firmware
//
// The signature covers the metadata, and the metadata carries the firmware's
// SHA-256, so one signature authenticates everything; the image must end
// exactly after the firmware. The signed message is small, so the signature
// is checked before the firmware is even looked at: the board name, size and
// the truncation count in an error come from signed data. Keys are PEM:
// PKCS #8 "PRIVATE KEY" and PKIX "PUBLIC KEY" blocks, the form
// `openssl genpkey -algorithm ed25519` writes.
//
// # What a power cut leaves
//
// The AR71xx-family boards gowrt targets have one firmware partition.
// Apply writes it in place, from its first block to its last, so a power cut
// in the middle leaves a partition that is partly new and partly old (or
// torn within one block). The bootloader refuses that image: U-Boot's bootm
// checks a legacy uImage's magic, header CRC and data CRC (BootCheck does
// the same checks) and the CRC of a half-written image does not match. Such a
// board then stays in the bootloader, where its TFTP recovery (tftpboot and
// a flash write from the serial console, or the vendor's automatic
// recovery) reinstalls a firmware. A cut before the first erase of the
// firmware partition leaves the old firmware, a cut after its last block the
// new one; a configuration that is kept is never written. A discarded
// configuration is erased only once the new firmware is complete and read
// back: a cut in between leaves the new firmware with the old configuration,
// or with a torn one that flash/confstore rejects (the firmware's defaults).
// Surviving a cut
// and still booting a full firmware (A/B updates) needs two firmware
// partitions, which these boards' flash layouts do not have.
package sysupgrade
