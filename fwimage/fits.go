package fwimage

import "fmt"

// Fits reports whether img fits a firmware partition of partition bytes,
// with an error naming both sizes when it does not.
func Fits(img []byte, partition int) error {
	if partition <= 0 {
		return fmt.Errorf("fwimage: firmware partition size %d is not positive", partition)
	}
	if len(img) > partition {
		return fmt.Errorf("fwimage: image is %d bytes (%d KiB), the firmware partition %d bytes (%d KiB): %d bytes too big",
			len(img), (len(img)+1023)>>10, partition, partition>>10, len(img)-partition)
	}
	return nil
}
