package part

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// RedBoot FIS directory layout (Linux drivers/mtd/parsers/redboot.c,
// struct fis_image_desc; eCos redboot include/fis.h): 256-byte entries of
//
//	name[16]     NUL-terminated
//	flash_base   u32  address of the image in flash (CPU address space)
//	mem_base     u32  load address
//	size         u32  length of the flash region
//	entry_point  u32
//	data_length  u32  length of the image data
//	pad          up to byte 248
//	desc_cksum   u32  (not written by RedBoot; Linux ignores it)
//	file_cksum   u32
//
// in the byte order of the CPU that wrote it. An entry whose name starts
// 0xff 0xff ends the directory; one starting with 0xff and anything else
// is an unused slot and skipped (Linux redboot.c). Without a known flash
// origin Linux takes flash_base modulo the device size (flash_base &=
// size-1), which turns RouterStation Pro's 0xbf000000-based addresses into
// offsets; ParseFIS does the same.
const (
	fisEntrySize = 256
	fisNameLen   = 16
	fisFlashBase = 16
	fisSize      = 24
)

// ParseFIS parses a RedBoot FIS directory block for a device of devSize
// bytes (a power of two). Entries come back sorted by offset. Entries may
// overlap (RedBoot keeps "FIS directory" and "RedBoot config" in one erase
// block on some boards; Linux does not check either), but none may run
// past the device.
func ParseFIS(dir []byte, devSize int64, bigEndian bool) ([]Partition, error) {
	if devSize <= 0 || devSize&(devSize-1) != 0 || devSize > 1<<32 {
		return nil, fmt.Errorf("part: FIS: device size %#x is not a power of two up to 4 GiB", devSize)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	var parts []Partition
	ended := false
	for off := 0; off+fisEntrySize <= len(dir); off += fisEntrySize {
		e := dir[off : off+fisEntrySize]
		if e[0] == 0xff {
			if e[1] == 0xff {
				ended = true
				break
			}
			continue
		}
		name, err := fisName(e[:fisNameLen])
		if err != nil {
			return nil, fmt.Errorf("part: FIS entry %d: %w", off/fisEntrySize, err)
		}
		base := int64(order.Uint32(e[fisFlashBase:])) & (devSize - 1)
		size := int64(order.Uint32(e[fisSize:]))
		p := Partition{Name: name, Offset: base, Size: size}
		if size == 0 || size > devSize-base {
			hint := ""
			if sw := int64(swap32(uint32(size))); sw > 0 && sw <= devSize-base {
				hint = " (wrong byte order?)"
			}
			return nil, fmt.Errorf("%w: FIS entry %v does not fit the %#x-byte device%s", ErrLayout, p, devSize, hint)
		}
		for _, q := range parts {
			if q.Name == name {
				return nil, fmt.Errorf("%w: FIS: two entries named %q", ErrLayout, name)
			}
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		if !ended {
			return nil, fmt.Errorf("part: FIS: no directory entries and no end marker in %d bytes", len(dir))
		}
		return nil, fmt.Errorf("part: FIS: empty directory")
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Offset < parts[j].Offset })
	return parts, nil
}

// fisName decodes a NUL-terminated name; names are printable ASCII.
func fisName(b []byte) (string, error) {
	n := 0
	for n < len(b) && b[n] != 0 {
		if b[n] < 0x20 || b[n] > 0x7e {
			return "", fmt.Errorf("name % x is not printable ASCII", b)
		}
		n++
	}
	if n == 0 {
		return "", fmt.Errorf("empty name")
	}
	return string(b[:n]), nil
}

func swap32(v uint32) uint32 { return v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24 }
