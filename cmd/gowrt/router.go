package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/gowrt/gowrt/board/ar71xx/boardfile"
	"github.com/gowrt/gowrt/fwimage"
	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/image/routers"
	"github.com/gowrt/gowrt/sysupgrade"
)

// Payload compressions of gowrt build -compress.
const (
	compressLZMA = "lzma"
	compressNone = "none"
)

// upgradeExt is the extension of a signed sysupgrade image (-sign).
const upgradeExt = ".gowrtupg"

// routerBuild is one gowrt build for a boardfile router.
type routerBuild struct {
	board    image.Board
	pkg, out string
	compress string // compressLZMA or compressNone (U-Boot boards only)
	signKey  string // private key file, "" for no signed upgrade image
	version  string // the firmware's version (in the signed metadata)
	linkVer  bool   // link version into main.version (-version given)
	log      io.Writer
}

// outFile is one file gowrt build writes.
type outFile struct {
	path string
	data []byte
	what string
}

// firmware is what the boot loader gets for one router: the files to
// write, and flash, the bytes that end up in the firmware partition (what
// a signed upgrade carries).
type firmware struct {
	files []outFile
	flash []byte
}

// sysupgradeName inserts "-sysupgrade" before out's extension.
func sysupgradeName(out string) string { return insertBeforeExt(out, "-sysupgrade") }

func insertBeforeExt(out, s string) string {
	ext := filepath.Ext(out)
	if strings.ContainsRune(ext, os.PathSeparator) {
		ext = ""
	}
	return strings.TrimSuffix(out, ext) + s + ext
}

// rawName is the RedBoot board's flat binary beside the ELF.
func rawName(out string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-raw.bin"
}

// buildRouter builds the firmware ELF for a router and writes the images
// its boot loader takes.
func buildRouter(ctx context.Context, o routerBuild) error {
	r := routers.Of(o.board)
	var priv ed25519.PrivateKey
	if o.signKey != "" {
		pem, err := os.ReadFile(o.signKey)
		if err != nil {
			return fmt.Errorf("build: -sign: %w", err)
		}
		key, err := sysupgrade.ParsePrivateKey(pem)
		if err != nil {
			return fmt.Errorf("build: -sign %s: %w (make a key with gowrt keygen -o FILE)", o.signKey, err)
		}
		priv = key
	}
	dir, err := os.MkdirTemp("", "gowrt-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	elfPath := filepath.Join(dir, "firmware.elf")
	b := o.board
	if o.linkVer {
		b.LDExtra += " -X main.version=" + o.version
	}
	if priv != nil {
		// The firmware verifies later upgrades with the same key.
		b.LDExtra += " -X main.upgradeKey=" + sysupgrade.BuiltinKey(priv.Public().(ed25519.PublicKey))
	}
	if err := buildImage(ctx, b, o.pkg, elfPath, o.log); err != nil {
		return err
	}
	elfBytes, err := os.ReadFile(elfPath)
	if err != nil {
		return err
	}
	fw, err := routerFirmware(r, elfBytes, o.compress, "gowrt "+path.Base(o.pkg), o.out, o.log)
	if err != nil {
		return err
	}
	if priv != nil {
		img, err := sysupgrade.Sign(fw.flash, sysupgrade.Metadata{Board: r.Name, Version: o.version}, priv)
		if err != nil {
			return fmt.Errorf("build: -sign: %w", err)
		}
		fw.files = append(fw.files, outFile{o.out + upgradeExt, img,
			fmt.Sprintf("signed upgrade image (board %s, version %s) for the running firmware's sysupgrade", r.Name, o.version)})
	}
	for _, f := range fw.files {
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(o.log, "gowrt: wrote %s: %s, %s\n", f.path, f.what, size(len(f.data)))
	}
	serve := fw.files[0].path
	switch r.Image.Format {
	case boardfile.TPLink:
		serve = sysupgradeName(o.out)
	case boardfile.RedBoot:
		serve = rawName(o.out)
	}
	fmt.Fprintf(o.log, "gowrt: to install it from the boot loader's console: gowrt tftp -board %s %s\n", r.Name, serve)
	return nil
}

// size formats a byte count for the build's report.
func size(n int) string { return fmt.Sprintf("%d bytes (%.2f MiB)", n, float64(n)/(1<<20)) }

// routerFirmware turns a router's firmware ELF into its boot loader's
// image(s) and checks them against the firmware partition; it reports the
// sizes and warns about the boot loader's decompression limit on log.
func routerFirmware(r *boardfile.Board, elfBytes []byte, compress, name, out string, log io.Writer) (firmware, error) {
	part, err := r.Part(boardfile.PartFirmware)
	if err != nil {
		return firmware{}, err
	}
	raw, load, entry, err := fwimage.Raw(elfBytes)
	if err != nil {
		return firmware{}, err
	}
	fmt.Fprintf(log, "gowrt: %s: raw image %s at %#x, entry %#x\n", r.Name, size(len(raw)), load, entry)
	if len(name) > 32 {
		name = name[:32]
	}
	var fw firmware
	switch r.Image.Format {
	case boardfile.TPLink:
		comp, err := fwimage.LZMA(raw)
		if err != nil {
			return firmware{}, err
		}
		fmt.Fprintf(log, "gowrt: %s: LZMA %s (%.0f%% of raw)\n", r.Name, size(len(comp)), 100*float64(len(comp))/float64(len(raw)))
		area := uint32(fwimage.TPLink8MLZMA)
		if r.Flash.Size > 8<<20 {
			area = fwimage.TPLink16MLZMA
		}
		t := fwimage.TPLink{Vendor: fwimage.TPLinkVendor, Version: fwimage.TPLinkVersion, HWID: r.Image.TPLinkHWID, HWRev: 1,
			KernelLoad: load, KernelEntry: entry, FirmwareSize: area}
		sysup, err := t.Build(comp, false)
		if err != nil {
			return firmware{}, err
		}
		if err := checkFits(r, "TP-Link image (header + LZMA payload)", sysup, part); err != nil {
			return firmware{}, err
		}
		factory, err := t.Build(comp, true)
		if err != nil {
			return firmware{}, err
		}
		fw.files = []outFile{
			{out, factory, fmt.Sprintf("TP-Link factory image for the vendor firmware's web upgrade (padded with 0xff to TP-Link's %d KiB firmware area, "+
				"which also erases the start of gowrt's config partition)", area>>10)},
			{sysupgradeName(out), sysup, "TP-Link sysupgrade image (header + LZMA payload, unpadded): for gowrt tftp and the boot loader's console"},
		}
		fw.flash = sysup
		warnBootm(r, len(raw), "", log)
	case boardfile.UImage:
		payload := raw
		if compress == compressLZMA {
			if payload, err = fwimage.LZMA(raw); err != nil {
				return firmware{}, err
			}
			fmt.Fprintf(log, "gowrt: %s: LZMA %s (%.0f%% of raw)\n", r.Name, size(len(payload)), 100*float64(len(payload))/float64(len(raw)))
		}
		img, err := fwimage.UImage{Name: name, Load: load, Entry: entry, Comp: compress, OS: "linux", Arch: "mips",
			Type: "kernel", Time: time.Now()}.Build(payload)
		if err != nil {
			return firmware{}, err
		}
		if err := checkFits(r, "uImage", img, part); err != nil {
			if compress == compressNone {
				return firmware{}, fmt.Errorf("%w; build it LZMA-compressed (-compress lzma, the default)", err)
			}
			return firmware{}, err
		}
		fw.files = []outFile{{out, img, fmt.Sprintf("U-Boot legacy uImage (%s) for bootm", compress)}}
		fw.flash = img
		if compress == compressLZMA {
			alt := ""
			if n := fwimage.UImageHeaderLen + len(raw); int64(n) <= part.Size {
				alt = fmt.Sprintf("An uncompressed uImage (%s) fits the firmware partition, and bootm copies rather than decompresses it: "+
					"build with -compress none to use it.", size(n))
			} else {
				alt = fmt.Sprintf("An uncompressed uImage (%s) would not fit the firmware partition either.", size(n))
			}
			warnBootm(r, len(raw), alt, log)
		}
	case boardfile.RedBoot:
		if err := checkFits(r, "raw image", raw, part); err != nil {
			return firmware{}, err
		}
		fw.files = []outFile{
			{out, elfBytes, "ELF for RedBoot's load (runs from RAM)"},
			{rawName(out), raw, fmt.Sprintf("flat binary for the flash (fis create), loaded at %#x, entry %#x", load, entry)},
		}
		fw.flash = raw
		fmt.Fprintf(log, "gowrt: %s: RedBoot console commands (gowrt tftp -board %s %s prints them with its own address):\n%s",
			r.Name, r.Name, rawName(out), redbootCommands(r, path.Base(rawName(out)), len(raw), entry, defaultServerIP, defaultRouterIP))
	default:
		return firmware{}, fmt.Errorf("%s: image format %v unknown", r.Name, r.Image.Format)
	}
	reportFit(r, fw.flash, log)
	return fw, nil
}

// checkFits checks img against the firmware partition and reports how
// much of it is used.
func checkFits(r *boardfile.Board, what string, img []byte, part boardfile.Partition) error {
	if err := fwimage.Fits(img, int(part.Size)); err != nil {
		return fmt.Errorf("%s: the %s does not fit the firmware partition: %w", r.Name, what, err)
	}
	return nil
}

// reportFit prints the image's share of the firmware partition.
func reportFit(r *boardfile.Board, img []byte, log io.Writer) {
	part, err := r.Part(boardfile.PartFirmware)
	if err != nil {
		return
	}
	fmt.Fprintf(log, "gowrt: %s: firmware partition %s at flash offset %#x: the image uses %.0f%%\n",
		r.Name, size(int(part.Size)), part.Offset, 100*float64(len(img))/float64(part.Size))
}

// warnBootm warns when the boot loader must decompress more than its
// bootm limit.
func warnBootm(r *boardfile.Board, rawLen int, alternative string, log io.Writer) {
	limit := r.Image.BootmLimit
	if limit <= 0 || int64(rawLen) <= limit {
		return
	}
	fmt.Fprintf(log, "gowrt: WARNING: %s: the firmware decompresses to %s, more than the %s the boot loader's bootm decompresses "+
		"(U-Boot's CONFIG_SYS_BOOTM_LEN; the vendor loader's value is UNVERIFIED): it would refuse to boot this image. "+
		"OpenWrt avoids the limit with a small self-decompressing loader (lzma-loader) in the kernel's place, which gowrt does not have.",
		r.Name, size(rawLen), size(int(limit)))
	if alternative != "" {
		fmt.Fprint(log, " ", alternative)
	}
	fmt.Fprintln(log)
}
