package sysupgrade

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/gowrt/gowrt/flash"
)

// Errors of Apply, besides Verify's.
var (
	ErrTooBig = errors.New("sysupgrade: firmware does not fit the firmware partition")
	ErrTarget = errors.New("sysupgrade: bad flash layout")
	ErrVerify = errors.New("sysupgrade: flash read-back differs from what was written")
)

// Target is where an upgrade goes: the flash and its firmware and
// configuration partitions (byte offsets and lengths, whole erase blocks).
type Target struct {
	Flash                    flash.Device
	FirmwareOff, FirmwareLen int64
	// ConfigOff and ConfigLen locate the configuration partition; a zero
	// ConfigLen means the board has none (then only KeepConfig works).
	ConfigOff, ConfigLen int64
}

// Options are the user's choices, as OpenWrt's sysupgrade flags.
type Options struct {
	// KeepConfig leaves the configuration partition untouched; false
	// ("sysupgrade -n") erases it after the firmware is written, so the
	// new firmware starts from its defaults.
	KeepConfig bool
}

// check validates the layout against the device before anything is written.
func (t Target) check(o Options) error {
	d := t.Flash
	if d == nil {
		return fmt.Errorf("%w: no flash device", ErrTarget)
	}
	bs, pu, size := int64(d.BlockSize()), int64(d.ProgramUnit()), d.Size()
	if bs <= 0 || pu <= 0 || bs%pu != 0 {
		return fmt.Errorf("%w: erase block %d bytes, program unit %d bytes", ErrTarget, bs, pu)
	}
	part := func(what string, off, n int64) error {
		if off < 0 || n <= 0 || off > size || n > size-off {
			return fmt.Errorf("%w: %s partition of %d bytes at %#x is outside the %d-byte flash", ErrTarget, what, n, off, size)
		}
		if off%bs != 0 || n%bs != 0 {
			return fmt.Errorf("%w: %s partition of %#x bytes at %#x is not whole %#x-byte erase blocks", ErrTarget, what, n, off, bs)
		}
		return nil
	}
	if err := part("firmware", t.FirmwareOff, t.FirmwareLen); err != nil {
		return err
	}
	if t.ConfigLen == 0 {
		if !o.KeepConfig {
			return fmt.Errorf("%w: discarding the configuration needs a config partition, the layout has none", ErrTarget)
		}
		return nil
	}
	if err := part("config", t.ConfigOff, t.ConfigLen); err != nil {
		return err
	}
	if t.ConfigOff < t.FirmwareOff+t.FirmwareLen && t.FirmwareOff < t.ConfigOff+t.ConfigLen {
		return fmt.Errorf("%w: firmware partition [%#x, %#x) overlaps config partition [%#x, %#x)", ErrTarget,
			t.FirmwareOff, t.FirmwareOff+t.FirmwareLen, t.ConfigOff, t.ConfigOff+t.ConfigLen)
	}
	return nil
}

// Apply verifies img (see Verify) and that its firmware fits t, and only
// then writes the firmware partition from its first block on: each block is
// erased, programmed and read back (a block that already holds the new bytes
// is left alone). Blocks of the partition after the firmware's end are not
// erased. Without o.KeepConfig the config partition is erased last; with it,
// the config partition is never touched. progress, if not nil, is called
// after each block with the bytes done out of the total (firmware bytes,
// plus the config partition's when it is erased).
//
// A refused image or layout writes nothing. An error after the first erase
// (a failed erase or program, a read-back mismatch) leaves a firmware
// partition the bootloader will not boot; see the package documentation.
func Apply(img []byte, board string, pub ed25519.PublicKey, t Target, o Options, progress func(done, total int64)) error {
	md, fw, err := Verify(img, board, pub)
	if err != nil {
		return err
	}
	if err := t.check(o); err != nil {
		return err
	}
	if md.Size > t.FirmwareLen {
		return fmt.Errorf("%w: firmware %s is %d bytes, the firmware partition holds %d", ErrTooBig, md.Version, md.Size, t.FirmwareLen)
	}
	d := t.Flash
	bs, pu := int64(d.BlockSize()), int64(d.ProgramUnit())
	total := md.Size
	if !o.KeepConfig {
		total += t.ConfigLen
	}
	var done int64
	step := func(n int64) {
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	buf := make([]byte, bs) // read-back and the padded last program unit
	for off := int64(0); off < md.Size; off += bs {
		chunk := fw[off:min(off+bs, md.Size)]
		if err := writeBlock(d, t.FirmwareOff+off, chunk, pu, buf); err != nil {
			return fmt.Errorf("firmware partition: %w", err)
		}
		step(int64(len(chunk)))
	}
	if o.KeepConfig {
		return nil
	}
	for off := t.ConfigOff; off < t.ConfigOff+t.ConfigLen; off += bs {
		if err := eraseBlock(d, off, buf); err != nil {
			return fmt.Errorf("config partition: %w", err)
		}
		step(bs)
	}
	return nil
}

// writeBlock makes the erase block at addr start with data (at most one
// block), then reads it back.
func writeBlock(d flash.Device, addr int64, data []byte, pu int64, buf []byte) error {
	got := buf[:len(data)]
	if _, err := d.ReadAt(got, addr); err == nil && bytes.Equal(got, data) {
		return nil // already there: save an erase cycle
	}
	if err := d.Erase(addr); err != nil {
		return fmt.Errorf("erase block at %#x: %w", addr, err)
	}
	whole := int64(len(data)) / pu * pu
	if whole > 0 {
		if err := d.Program(addr, data[:whole]); err != nil {
			return fmt.Errorf("program %d bytes at %#x: %w", whole, addr, err)
		}
	}
	if rest := data[whole:]; len(rest) > 0 {
		// The firmware's end is not a program unit boundary: pad with
		// erased bytes, which programming leaves as they are.
		last := buf[:pu]
		n := copy(last, rest)
		for i := n; i < len(last); i++ {
			last[i] = 0xff
		}
		if err := d.Program(addr+whole, last); err != nil {
			return fmt.Errorf("program %d bytes at %#x: %w", len(last), addr+whole, err)
		}
	}
	if _, err := d.ReadAt(got, addr); err != nil {
		return fmt.Errorf("read back block at %#x: %w", addr, err)
	}
	if i := mismatch(got, data); i >= 0 {
		return fmt.Errorf("%w: byte at %#x is %#02x, wrote %#02x", ErrVerify, addr+int64(i), got[i], data[i])
	}
	return nil
}

// eraseBlock erases the block at addr unless it is erased already, then
// checks that it reads as erased.
func eraseBlock(d flash.Device, addr int64, buf []byte) error {
	if _, err := d.ReadAt(buf, addr); err == nil && mismatchByte(buf, 0xff) < 0 {
		return nil
	}
	if err := d.Erase(addr); err != nil {
		return fmt.Errorf("erase block at %#x: %w", addr, err)
	}
	if _, err := d.ReadAt(buf, addr); err != nil {
		return fmt.Errorf("read back block at %#x: %w", addr, err)
	}
	if i := mismatchByte(buf, 0xff); i >= 0 {
		return fmt.Errorf("%w: byte at %#x is %#02x after erase", ErrVerify, addr+int64(i), buf[i])
	}
	return nil
}

func mismatch(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func mismatchByte(a []byte, v byte) int {
	for i := range a {
		if a[i] != v {
			return i
		}
	}
	return -1
}
