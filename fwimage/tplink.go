package fwimage

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
)

// TP-Link firmware header v1, as OpenWrt's firmware-utils
// src/mktplinkfw.c (struct fw_header, fill_header, build_fw) builds it for
// the TL-WDR3600/TL-WDR4300 ("8Mlzma" layout) and Archer C7 v2
// ("16Mlzma"): a 512-byte big-endian header, the kernel right after it.
//
// What gowrt puts there: OpenWrt's ath79 target (target/linux/ath79/image/
// common-tp-link.mk, Device/tplink) gives these boards a raw LZMA kernel,
// no uImage ("KERNEL := kernel-bin | append-dtb | lzma"); TP-Link's boot
// loader reads this header from flash and decompresses kernel_len bytes
// at kernel_ofs to kernel_la, then jumps to kernel_ep. So the kernel
// argument of TPLink.Build is LZMA(raw) and KernelLoad/KernelEntry come
// from Raw. gowrt has no root file system: rootfs_len is 0 and rootfs_ofs
// points right after the kernel (mktplinkfw's -O for combined images).
// The factory image is padded with 0xff to the whole firmware area
// (fw_length, the layout's fw_max_len), which TP-Link's web upgrade
// expects; the sysupgrade image is not (mktplinkfw -s). The MD5 covers
// the whole output with the salt in md5sum1 while it is computed; the
// second salt is for TP-Link images that carry a boot loader (boot_len
// != 0): ParseTPLink checks such images' MD5 but then refuses them, and
// Build never writes one.
const (
	TPLinkHeaderLen = 0x200
	tplinkV1        = 0x01000000 // HEADER_VERSION_V1

	// Firmware area sizes (fw_max_len) of mktplinkfw's flash layouts.
	TPLink8MLZMA  = 0x7c0000 // "8Mlzma": TL-WDR3600 v1, TL-WDR4300 v1
	TPLink16MLZMA = 0xf80000 // "16Mlzma": Archer C7 v2

	// Hardware IDs (TPLINK_HWID, ath79 generic-tp-link.mk); hw_rev is 1.
	TPLinkHWIDWDR3600v1  = 0x36000001
	TPLinkHWIDWDR4300v1  = 0x43000001
	TPLinkHWIDArcherC7v2 = 0xc7000002

	// mktplinkfw's defaults for the vendor and version strings.
	TPLinkVendor  = "TP-LINK Technologies"
	TPLinkVersion = "ver. 1.0"

	// Field offsets in struct fw_header.
	tpVersion    = 0x00
	tpVendor     = 0x04 // char[24]
	tpFWVersion  = 0x1c // char[36]
	tpHWID       = 0x40
	tpHWRev      = 0x44
	tpRegionCode = 0x48
	tpMD5Sum1    = 0x4c // [16]
	tpUnk2       = 0x5c
	tpMD5Sum2    = 0x60 // [16]
	tpUnk3       = 0x70
	tpKernelLA   = 0x74
	tpKernelEP   = 0x78
	tpFWLength   = 0x7c
	tpKernelOfs  = 0x80
	tpKernelLen  = 0x84
	tpRootfsOfs  = 0x88
	tpRootfsLen  = 0x8c
	tpBootOfs    = 0x90
	tpBootLen    = 0x94
	tpVerHi      = 0x98  // three uint16: ver_hi, ver_mid, ver_lo
	tpRegionStr1 = 0x120 // char[32]
	tpRegionStr2 = 0x140 // char[32]

	tpVendorLen    = 24
	tpFWVersionLen = 36
	tpRegionStrLen = 32
)

// The MD5 salts of mktplinkfw.c: md5salt_normal for firmware without a
// boot loader, md5salt_boot for firmware with one.
var (
	tplinkSaltNormal = [16]byte{0xdc, 0xd7, 0x3a, 0xa5, 0xc3, 0x95, 0x98, 0xfb, 0xdd, 0xf9, 0xe7, 0xf4, 0x0e, 0xae, 0x47, 0x38}
	tplinkSaltBoot   = [16]byte{0x8c, 0xef, 0x33, 0x5b, 0xd5, 0xc5, 0xce, 0xfa, 0xa7, 0x9c, 0x28, 0xda, 0xb2, 0xe9, 0x0f, 0x42}
)

// tplinkRegions are mktplinkfw's -C region codes (Archer C7 v2 factory
// images are built for "US" and "EU").
var tplinkRegions = map[string]uint32{"US": 1, "EU": 0, "BR": 0}

// TPLink is a TP-Link v1 firmware header's contents.
type TPLink struct {
	Vendor  string // at most 24 bytes; TPLinkVendor by mktplinkfw's default, OpenWrt writes "OpenWrt"
	Version string // at most 36 bytes; TPLinkVersion by default
	HWID    uint32 // board: TPLinkHWID*
	HWRev   uint32 // 1 for these boards
	Region  string // "" (none), "US", "EU" or "BR"

	KernelLoad, KernelEntry uint32 // where the boot loader decompresses the kernel to, and jumps
	FirmwareSize            uint32 // the layout's firmware area: TPLink8MLZMA or TPLink16MLZMA

	FWVersion [3]uint16 // ver_hi, ver_mid, ver_lo
}

// Build returns the firmware image with kernel (LZMA(raw)) after the
// header: padded with 0xff to FirmwareSize for a factory image (what
// TP-Link's web upgrade takes), unpadded for sysupgrade.
func (t TPLink) Build(kernel []byte, factory bool) ([]byte, error) {
	if len(t.Vendor) > tpVendorLen || len(t.Version) > tpFWVersionLen ||
		bytes.IndexByte([]byte(t.Vendor+t.Version), 0) >= 0 {
		return nil, fmt.Errorf("fwimage: TP-Link vendor %q / version %q: at most %d / %d bytes, no NUL", t.Vendor, t.Version, tpVendorLen, tpFWVersionLen)
	}
	if len(kernel) == 0 {
		return nil, errors.New("fwimage: TP-Link image without a kernel")
	}
	regionCode, ok := tplinkRegions[t.Region]
	if !ok && t.Region != "" {
		return nil, fmt.Errorf("fwimage: TP-Link region %q unknown (US, EU, BR or none)", t.Region)
	}
	used := TPLinkHeaderLen + uint64(len(kernel))
	if used > uint64(t.FirmwareSize) {
		return nil, fmt.Errorf("fwimage: TP-Link firmware is %d bytes (%d header + %d kernel), the firmware area %d bytes: %d bytes too big",
			used, TPLinkHeaderLen, len(kernel), t.FirmwareSize, used-uint64(t.FirmwareSize))
	}
	n := used
	if factory {
		n = uint64(t.FirmwareSize)
	}
	b := make([]byte, n)
	for i := used; i < n; i++ {
		b[i] = 0xff // erased flash
	}
	be := binary.BigEndian
	be.PutUint32(b[tpVersion:], tplinkV1)
	copy(b[tpVendor:tpVendor+tpVendorLen], t.Vendor)
	copy(b[tpFWVersion:tpFWVersion+tpFWVersionLen], t.Version)
	be.PutUint32(b[tpHWID:], t.HWID)
	be.PutUint32(b[tpHWRev:], t.HWRev)
	be.PutUint32(b[tpKernelLA:], t.KernelLoad)
	be.PutUint32(b[tpKernelEP:], t.KernelEntry)
	be.PutUint32(b[tpFWLength:], t.FirmwareSize)
	be.PutUint32(b[tpKernelOfs:], TPLinkHeaderLen)
	be.PutUint32(b[tpKernelLen:], uint32(len(kernel)))
	be.PutUint32(b[tpRootfsOfs:], uint32(used))
	for i, v := range t.FWVersion {
		be.PutUint16(b[tpVerHi+2*i:], v)
	}
	if t.Region != "" {
		be.PutUint32(b[tpRegionCode:], regionCode)
		s1, s2 := regionStrings(t.Region)
		copy(b[tpRegionStr1:], s1)
		copy(b[tpRegionStr2:], s2)
	}
	copy(b[TPLinkHeaderLen:], kernel)
	copy(b[tpMD5Sum1:], tplinkSaltNormal[:])
	sum := md5.Sum(b)
	copy(b[tpMD5Sum1:], sum[:])
	return b, nil
}

// regionStrings are mktplinkfw's region_str1 and region_str2: the region
// name's four bytes (NUL padded) in hex, the first with a zero prefix.
func regionStrings(region string) (string, string) {
	var n [4]byte
	copy(n[:], region)
	hex := fmt.Sprintf("%02X%02X%02X%02X", n[0], n[1], n[2], n[3])
	return "00000000;" + hex + ";", hex
}

// cstring returns the NUL-terminated string in field, refusing bytes
// after the NUL (Build writes none).
func cstring(what string, field []byte) (string, error) {
	n := bytes.IndexByte(field, 0)
	if n < 0 {
		return string(field), nil
	}
	if !allBytes(field[n:], 0) {
		return "", fmt.Errorf("fwimage: TP-Link %s has bytes after its terminating NUL", what)
	}
	return string(field[:n]), nil
}

func allBytes(b []byte, v byte) bool {
	for _, c := range b {
		if c != v {
			return false
		}
	}
	return true
}

// ParseTPLink checks a TP-Link v1 firmware image (header version, MD5 with
// the salt its boot_len calls for, lengths) and returns its header and
// kernel. It accepts what Build writes, factory or sysupgrade, and
// refuses images with a root file system or boot loader (TP-Link's and
// OpenWrt's), which gowrt does not flash.
func ParseTPLink(b []byte) (TPLink, []byte, error) {
	if len(b) < TPLinkHeaderLen {
		return TPLink{}, nil, fmt.Errorf("fwimage: %d bytes, shorter than a TP-Link header (%d)", len(b), TPLinkHeaderLen)
	}
	be := binary.BigEndian
	if v := be.Uint32(b[tpVersion:]); v != tplinkV1 {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link header version %#08x, want %#08x (v1)", v, tplinkV1)
	}
	salt := tplinkSaltNormal
	if be.Uint32(b[tpBootLen:]) != 0 {
		salt = tplinkSaltBoot
	}
	h := md5.New()
	h.Write(b[:tpMD5Sum1])
	h.Write(salt[:])
	h.Write(b[tpMD5Sum1+16:])
	if sum := h.Sum(nil); !bytes.Equal(sum, b[tpMD5Sum1:tpMD5Sum1+16]) {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link MD5 %x, header says %x", sum, b[tpMD5Sum1:tpMD5Sum1+16])
	}
	if n := be.Uint32(b[tpBootLen:]); n != 0 {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link image carries a %d-byte boot loader: not a gowrt image", n)
	}
	if n := be.Uint32(b[tpRootfsLen:]); n != 0 {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link image has a %d-byte root file system: not a gowrt image", n)
	}
	kofs, klen := be.Uint32(b[tpKernelOfs:]), be.Uint32(b[tpKernelLen:])
	if kofs != TPLinkHeaderLen {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link kernel at offset %#x, want %#x", kofs, TPLinkHeaderLen)
	}
	used := uint64(TPLinkHeaderLen) + uint64(klen)
	if klen == 0 || used > uint64(len(b)) {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link kernel of %d bytes does not fit the %d-byte image", klen, len(b))
	}
	if r := be.Uint32(b[tpRootfsOfs:]); uint64(r) != used {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link rootfs offset %#x, want %#x (right after the kernel)", r, used)
	}
	t := TPLink{
		HWID:         be.Uint32(b[tpHWID:]),
		HWRev:        be.Uint32(b[tpHWRev:]),
		KernelLoad:   be.Uint32(b[tpKernelLA:]),
		KernelEntry:  be.Uint32(b[tpKernelEP:]),
		FirmwareSize: be.Uint32(b[tpFWLength:]),
	}
	for i := range t.FWVersion {
		t.FWVersion[i] = be.Uint16(b[tpVerHi+2*i:])
	}
	// The image is either exactly the kernel (sysupgrade) or the whole
	// firmware area padded with 0xff (factory).
	if uint64(len(b)) != used && uint64(len(b)) != uint64(t.FirmwareSize) {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link image is %d bytes: neither header+kernel (%d) nor the firmware area (%d)", len(b), used, t.FirmwareSize)
	}
	if used > uint64(t.FirmwareSize) {
		return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link kernel ends at %d, beyond the %d-byte firmware area", used, t.FirmwareSize)
	}
	if !allBytes(b[used:], 0xff) {
		return TPLink{}, nil, errors.New("fwimage: TP-Link padding after the kernel is not erased flash (0xff)")
	}
	var err error
	if t.Vendor, err = cstring("vendor", b[tpVendor:tpVendor+tpVendorLen]); err != nil {
		return TPLink{}, nil, err
	}
	if t.Version, err = cstring("version", b[tpFWVersion:tpFWVersion+tpFWVersionLen]); err != nil {
		return TPLink{}, nil, err
	}
	s1, err := cstring("region", b[tpRegionStr1:tpRegionStr1+tpRegionStrLen])
	if err != nil {
		return TPLink{}, nil, err
	}
	if s1 != "" {
		for r := range tplinkRegions {
			if w1, w2 := regionStrings(r); w1 == s1 && string(b[tpRegionStr2:tpRegionStr2+len(w2)]) == w2 {
				t.Region = r
			}
		}
		if t.Region == "" {
			return TPLink{}, nil, fmt.Errorf("fwimage: TP-Link region string %q unknown", s1)
		}
	}
	// Everything else Build leaves zero must be zero, so that an accepted
	// image is exactly what Build makes of its fields.
	if want, err := t.Build(b[TPLinkHeaderLen:used], uint64(len(b)) != used); err != nil {
		return TPLink{}, nil, err
	} else if !bytes.Equal(want[:TPLinkHeaderLen], b[:TPLinkHeaderLen]) {
		return TPLink{}, nil, errors.New("fwimage: TP-Link header has fields gowrt does not know set (unk2, md5sum2, unk3, padding, region code)")
	}
	return t, b[TPLinkHeaderLen:used:used], nil
}
