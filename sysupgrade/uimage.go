package sysupgrade

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/fwimage"
)

// ErrBoot is wrapped by CheckUImage's errors.
var ErrBoot = errors.New("uImage would not boot")

// uImage header field the partition check needs before parsing: the data
// size (U-Boot include/image.h, struct legacy_img_hdr, ih_size).
const uimgOffSize = 12

// CheckUImage does the checks U-Boot's bootm makes of a legacy uImage at the
// start of part before it boots it (U-Boot's legacy-image checks
// image_check_magic, image_check_hcrc, image_check_dcrc, and the type codes
// it dispatches on): fwimage.ParseUImage on the header and the data it
// announces. Bytes after the data (the rest of the partition) are ignored.
func CheckUImage(part []byte) error {
	if len(part) < fwimage.UImageHeaderLen {
		return fmt.Errorf("%w: %d bytes, shorter than the header", ErrBoot, len(part))
	}
	size := uint64(binary.BigEndian.Uint32(part[uimgOffSize:]))
	if size > uint64(len(part)-fwimage.UImageHeaderLen) {
		return fmt.Errorf("%w: data size %d exceeds the %d bytes after the header", ErrBoot, size, len(part)-fwimage.UImageHeaderLen)
	}
	if _, _, err := fwimage.ParseUImage(part[:fwimage.UImageHeaderLen+int(size)]); err != nil {
		return fmt.Errorf("%w: %v", ErrBoot, err)
	}
	return nil
}

// BootCheck reports whether U-Boot would boot the legacy uImage at the
// start of the firmware partition part (see CheckUImage).
func BootCheck(part []byte) bool { return CheckUImage(part) == nil }
