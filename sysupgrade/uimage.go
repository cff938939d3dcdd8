package sysupgrade

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// U-Boot legacy image header (U-Boot include/image.h, struct
// legacy_img_hdr): 64 bytes, big-endian fields.
const (
	UImageMagic      = 0x27051956
	UImageHeaderSize = 64
	uimgOffHCRC      = 4  // header CRC32, computed with this field zeroed
	uimgOffSize      = 12 // data size
	uimgOffDCRC      = 24 // data CRC32
)

// ErrBoot is wrapped by CheckUImage's errors.
var ErrBoot = errors.New("uImage would not boot")

// CheckUImage does the checks U-Boot's bootm makes of a legacy uImage at the
// start of part before it boots it (U-Boot's legacy-image checks
// image_check_magic, image_check_hcrc, image_check_dcrc): the magic, the
// CRC32 of the 64-byte header with its CRC field zeroed, and the CRC32 of
// the data that follows. Bytes after the data are ignored.
func CheckUImage(part []byte) error {
	if len(part) < UImageHeaderSize {
		return fmt.Errorf("%w: %d bytes, shorter than the header", ErrBoot, len(part))
	}
	if m := binary.BigEndian.Uint32(part); m != UImageMagic {
		return fmt.Errorf("%w: bad magic %#08x", ErrBoot, m)
	}
	var h [UImageHeaderSize]byte
	copy(h[:], part)
	want := binary.BigEndian.Uint32(h[uimgOffHCRC:])
	binary.BigEndian.PutUint32(h[uimgOffHCRC:], 0)
	if got := crc32.ChecksumIEEE(h[:]); got != want {
		return fmt.Errorf("%w: header CRC %#08x, header says %#08x", ErrBoot, got, want)
	}
	size := uint64(binary.BigEndian.Uint32(h[uimgOffSize:]))
	if size > uint64(len(part)-UImageHeaderSize) {
		return fmt.Errorf("%w: data size %d exceeds the %d bytes after the header", ErrBoot, size, len(part)-UImageHeaderSize)
	}
	data := part[UImageHeaderSize : UImageHeaderSize+int(size)]
	if got, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(h[uimgOffDCRC:]); got != want {
		return fmt.Errorf("%w: data CRC %#08x, header says %#08x", ErrBoot, got, want)
	}
	return nil
}

// BootCheck reports whether U-Boot would boot the legacy uImage at the
// start of the firmware partition part (see CheckUImage).
func BootCheck(part []byte) bool { return CheckUImage(part) == nil }
