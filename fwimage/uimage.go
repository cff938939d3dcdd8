package fwimage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sort"
	"strings"
	"time"
)

// U-Boot legacy image format, from U-Boot's include/image.h (struct
// legacy_img_hdr, IH_* codes): a 64-byte big-endian header, then the
// payload. The header CRC is the IEEE CRC32 of the header with ih_hcrc
// zero; the data CRC is that of the payload.
const (
	UImageMagic     = 0x27051956 // IH_MAGIC
	UImageHeaderLen = 64
	uImageNameLen   = 32 // IH_NMLEN

	// Field offsets in struct legacy_img_hdr.
	ihMagic = 0
	ihHCRC  = 4
	ihTime  = 8
	ihSize  = 12
	ihLoad  = 16
	ihEP    = 20
	ihDCRC  = 24
	ihOS    = 28
	ihArch  = 29
	ihType  = 30
	ihComp  = 31
	ihName  = 32
)

// Numeric codes from include/image.h (enums ih_os, ih_arch, ih_type,
// ih_comp); only the ones gowrt's boards can use.
var (
	uImageOS   = map[string]byte{"linux": 5}                                            // IH_OS_LINUX
	uImageArch = map[string]byte{"mips": 5, "mips64": 6}                                // IH_ARCH_MIPS, IH_ARCH_MIPS64
	uImageType = map[string]byte{"standalone": 1, "kernel": 2, "firmware": 5}           // IH_TYPE_*
	uImageComp = map[string]byte{"none": 0, "gzip": 1, "bzip2": 2, "lzma": 3, "lzo": 4} // IH_COMP_*
)

// UImage is a U-Boot legacy image header's contents. OS, Arch, Type and
// Comp are U-Boot's names (mkimage -O/-A/-T/-C): "linux", "mips",
// "kernel", "none" or "lzma" for gowrt. Comp only labels the payload:
// Build does not compress. Time is the image timestamp (ih_time, seconds
// since 1970; the zero Time is written as 0).
type UImage struct {
	Name           string // at most 32 bytes, no NUL
	Load, Entry    uint32
	Comp           string
	OS, Arch, Type string
	Time           time.Time
}

func code(kind string, m map[string]byte, name string) (byte, error) {
	c, ok := m[name]
	if !ok {
		return 0, fmt.Errorf("fwimage: uImage %s %q unknown (known: %s)", kind, name, strings.Join(keys(m), ", "))
	}
	return c, nil
}

func name(kind string, m map[string]byte, c byte) (string, error) {
	for k, v := range m {
		if v == c {
			return k, nil
		}
	}
	return "", fmt.Errorf("fwimage: uImage %s code %d unknown", kind, c)
}

func keys(m map[string]byte) []string {
	k := make([]string, 0, len(m))
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return k
}

// Build returns the uImage of payload: the header, then payload.
func (u UImage) Build(payload []byte) ([]byte, error) {
	if len(u.Name) > uImageNameLen || strings.IndexByte(u.Name, 0) >= 0 {
		return nil, fmt.Errorf("fwimage: uImage name %q: want at most %d bytes and no NUL", u.Name, uImageNameLen)
	}
	if uint64(len(payload)) > math.MaxUint32 {
		return nil, fmt.Errorf("fwimage: uImage payload of %d bytes does not fit ih_size", len(payload))
	}
	var ts uint32
	if !u.Time.IsZero() {
		s := u.Time.Unix()
		if s < 0 || s > math.MaxUint32 {
			return nil, fmt.Errorf("fwimage: uImage time %v outside ih_time's range", u.Time)
		}
		ts = uint32(s)
	}
	var codes [4]byte
	var err error
	if codes[0], err = code("OS", uImageOS, u.OS); err != nil {
		return nil, err
	}
	if codes[1], err = code("arch", uImageArch, u.Arch); err != nil {
		return nil, err
	}
	if codes[2], err = code("type", uImageType, u.Type); err != nil {
		return nil, err
	}
	if codes[3], err = code("compression", uImageComp, u.Comp); err != nil {
		return nil, err
	}
	b := make([]byte, UImageHeaderLen+len(payload))
	be := binary.BigEndian
	be.PutUint32(b[ihMagic:], UImageMagic)
	be.PutUint32(b[ihTime:], ts)
	be.PutUint32(b[ihSize:], uint32(len(payload)))
	be.PutUint32(b[ihLoad:], u.Load)
	be.PutUint32(b[ihEP:], u.Entry)
	be.PutUint32(b[ihDCRC:], crc32.ChecksumIEEE(payload))
	copy(b[ihOS:], codes[:])
	copy(b[ihName:ihName+uImageNameLen], u.Name)
	copy(b[UImageHeaderLen:], payload)
	be.PutUint32(b[ihHCRC:], crc32.ChecksumIEEE(b[:UImageHeaderLen]))
	return b, nil
}

// ParseUImage checks a uImage strictly (magic, header CRC, size equal to
// the rest of b, data CRC, known codes, a NUL-padded name) and returns
// its header and payload. Callers reading from a partition cut b to
// UImageHeaderLen plus the header's size first.
func ParseUImage(b []byte) (UImage, []byte, error) {
	if len(b) < UImageHeaderLen {
		return UImage{}, nil, fmt.Errorf("fwimage: %d bytes, shorter than a uImage header (%d)", len(b), UImageHeaderLen)
	}
	be := binary.BigEndian
	if m := be.Uint32(b[ihMagic:]); m != UImageMagic {
		return UImage{}, nil, fmt.Errorf("fwimage: magic %#08x is not a uImage's (%#08x)", m, UImageMagic)
	}
	var h [UImageHeaderLen]byte
	copy(h[:], b)
	want := be.Uint32(h[ihHCRC:])
	be.PutUint32(h[ihHCRC:], 0)
	if got := crc32.ChecksumIEEE(h[:]); got != want {
		return UImage{}, nil, fmt.Errorf("fwimage: uImage header CRC %#08x, header says %#08x", got, want)
	}
	size := be.Uint32(b[ihSize:])
	if uint64(size) != uint64(len(b)-UImageHeaderLen) {
		return UImage{}, nil, fmt.Errorf("fwimage: uImage says %d data bytes, %d follow the header", size, len(b)-UImageHeaderLen)
	}
	payload := b[UImageHeaderLen:]
	if got, want := crc32.ChecksumIEEE(payload), be.Uint32(b[ihDCRC:]); got != want {
		return UImage{}, nil, fmt.Errorf("fwimage: uImage data CRC %#08x, header says %#08x", got, want)
	}
	rawName := b[ihName : ihName+uImageNameLen]
	n := bytes.IndexByte(rawName, 0)
	if n < 0 {
		n = uImageNameLen
	}
	for _, c := range rawName[n:] {
		if c != 0 {
			return UImage{}, nil, errors.New("fwimage: uImage name has bytes after its terminating NUL")
		}
	}
	u := UImage{
		Name:  string(rawName[:n]),
		Load:  be.Uint32(b[ihLoad:]),
		Entry: be.Uint32(b[ihEP:]),
		Time:  time.Unix(int64(be.Uint32(b[ihTime:])), 0).UTC(),
	}
	var err error
	if u.OS, err = name("OS", uImageOS, b[ihOS]); err != nil {
		return UImage{}, nil, err
	}
	if u.Arch, err = name("arch", uImageArch, b[ihArch]); err != nil {
		return UImage{}, nil, err
	}
	if u.Type, err = name("type", uImageType, b[ihType]); err != nil {
		return UImage{}, nil, err
	}
	if u.Comp, err = name("compression", uImageComp, b[ihComp]); err != nil {
		return UImage{}, nil, err
	}
	return u, payload, nil
}
