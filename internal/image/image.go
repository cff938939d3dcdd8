// Package image defines the boards gowrt builds firmware for (Boards): for
// each, the target architecture, the board package a firmware main
// imports, the link layout, the boot loader's view of the image and the
// QEMU machine that boots it, if any. Build runs the stock Go toolchain
// with a board's layout and then applies the loader's view (for ELF
// loaders, FixupELF places the data segment right after the read-only
// segments).
//
// Adding a board: write its board package (which imports the kernel and
// the SoC package providing the kernel's platform hooks; see package
// kernel) and add an entry to Boards. cmd/gowrt and the tests pick it up
// from there.
package image

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Board is how firmware for one board is built and booted: part of the
// board's definition, next to its board package. A firmware main for the
// board imports Package, which links the kernel and the SoC package that
// provides the kernel's platform hooks.
type Board struct {
	Name    string // "malta-be": what -board selects
	Doc     string // one line for gowrt help
	GOARCH  string // mips or mipsle
	Package string // the board package a firmware main imports

	// Link layout: where the linker puts text (with the ELF headers one
	// page below it) and the data segment, and the entry symbol. The
	// kernel's own memory map (package kernel) fixes what it boots:
	// KernelLayout.
	TextAddr, DataAddr uint64
	Entry              string

	// Fixup turns the linked ELF into what the board's boot loader loads
	// (the loader's view of the image), in place.
	Fixup func(b Board, path string) error

	// QEMU is the qemu-system program and Machine its -M machine that
	// boot the image; both empty for a board QEMU cannot emulate, whose
	// images are only built.
	QEMU, Machine string

	// Tags are build tags every image of the board is built with (the
	// router boards' gowrt_ar71xx, which makes examples/router link
	// board/ar71xx/router instead of board/malta/eth), and LDExtra
	// further linker flags (the router's name, -X …boardName=NAME).
	Tags    []string
	LDExtra string
}

// Bootable reports whether QEMU can boot the board's images.
func (b Board) Bootable() bool { return b.QEMU != "" }

// The kernel's layout (package kernel doc, kernel/layout_mipsx.go): text
// at 0x80101000 in kseg0, the ELF headers a page below it where the
// kernel reads its program headers (kseg0 below 0x80100000 is the
// kernel's own), data+BSS in the TLB-mapped kseg2 at 0xc0000000. (The
// data segment must sit above the text: Go 1.26's linker writes an
// all-zero data segment when -D is below -T, because it looks the data
// symbols up in a list ordered by section, not by address.)
const (
	KernelText  uint64 = 0x80101000
	KernelData  uint64 = 0xc0000000
	KernelEntry        = "github.com/gowrt/gowrt/kernel.Entry"
	pageSize           = 0x1000
	dataAlign          = 0x10000
	kseg0              = 0x80000000
)

// Boards are the boards gowrt can build for.
var Boards = map[string]Board{
	"malta-be": {
		Name: "malta-be", Doc: "QEMU malta, big-endian MIPS32 24Kc (qemu-system-mips)",
		GOARCH: "mips", Package: "github.com/gowrt/gowrt/board/malta",
		TextAddr: KernelText, DataAddr: KernelData, Entry: KernelEntry,
		Fixup: FixupELF, QEMU: "qemu-system-mips", Machine: "malta",
	},
	"malta-le": {
		Name: "malta-le", Doc: "QEMU malta, little-endian (qemu-system-mipsel)",
		GOARCH: "mipsle", Package: "github.com/gowrt/gowrt/board/malta",
		TextAddr: KernelText, DataAddr: KernelData, Entry: KernelEntry,
		Fixup: FixupELF, QEMU: "qemu-system-mipsel", Machine: "malta",
	},
	// AR71xx-family SoCs are big-endian MIPS32 24K/74K cores. U-Boot
	// loads an ELF with bootelf like QEMU's -kernel does; QEMU has no
	// machine for these SoCs, so the images are built, not booted.
	"ar71xx": {
		Name: "ar71xx", Doc: "any AR71xx-family SoC (AR71xx to QCA955x), big-endian; build only",
		GOARCH: "mips", Package: "github.com/gowrt/gowrt/board/ar71xx",
		TextAddr: KernelText, DataAddr: KernelData, Entry: KernelEntry,
		Fixup: FixupELF,
	},
}

// RouterPackage is the board package of the routers in
// board/ar71xx/boardfile, and RouterTag the build tag their images are
// built with.
const (
	RouterPackage = "github.com/gowrt/gowrt/board/ar71xx/router"
	RouterTag     = "gowrt_ar71xx"
	routerNameVar = RouterPackage + ".boardName"
)

// RouterBoard returns the board entry of the boardfile router name: the
// generic ar71xx board's kernel layout, the router package, the router
// tag, and the name linked into the router package. Package
// internal/image/routers adds one to Boards per router of
// board/ar71xx/boardfile (this package cannot import boardfile, which
// imports fwimage, whose tests build images with this package).
func RouterBoard(name, doc string) Board {
	return Board{
		Name: name, Doc: doc,
		GOARCH: "mips", Package: RouterPackage,
		TextAddr: KernelText, DataAddr: KernelData, Entry: KernelEntry,
		Fixup: FixupELF,
		Tags:  []string{RouterTag}, LDExtra: "-X " + routerNameVar + "=" + name,
	}
}

// Names returns the board names, sorted.
func Names() []string {
	n := make([]string, 0, len(Boards))
	for k := range Boards {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// LookupBoard returns the named board.
func LookupBoard(name string) (Board, error) {
	b, ok := Boards[name]
	if !ok {
		return Board{}, fmt.Errorf("unknown board %q (images are built for %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}

// LDFlags returns the linker flags for an image of b.
func (b Board) LDFlags(extra string) string {
	f := fmt.Sprintf("-T %#x -D %#x -R %#x -E %s", b.TextAddr, b.DataAddr, pageSize, b.Entry)
	if extra != "" {
		f += " " + extra
	}
	return f
}

// GoFlags returns goflags with the board's Tags merged into their -tags
// (the go command keeps only the last -tags it is given).
func (b Board) GoFlags(goflags ...string) []string {
	if len(b.Tags) == 0 {
		return goflags
	}
	tags := append([]string(nil), b.Tags...)
	var out []string
	for i := 0; i < len(goflags); i++ {
		f := goflags[i]
		switch {
		case f == "-tags" || f == "--tags":
			if i+1 < len(goflags) {
				i++
				tags = append(tags, splitTags(goflags[i])...)
			}
		case strings.HasPrefix(f, "-tags=") || strings.HasPrefix(f, "--tags="):
			tags = append(tags, splitTags(f[strings.IndexByte(f, '=')+1:])...)
		default:
			out = append(out, f)
		}
	}
	return append([]string{"-tags", strings.Join(tags, ",")}, out...)
}

func splitTags(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

// Env returns the go command's target environment for b.
func (b Board) Env() []string {
	return []string{"GOOS=linux", "GOARCH=" + b.GOARCH, "GOMIPS=softfloat", "CGO_ENABLED=0"}
}

// Build compiles pkg for board into out. dir is the working directory for
// the go command (the module root or below). Extra go build flags may be
// given; unless they choose a profile (-pgo), the build applies the
// firmware profile (see pgo.go). Ending ctx stops the build.
func Build(ctx context.Context, b Board, dir, pkg, out string, goflags ...string) error {
	pgo, err := pgoFlag(goflags)
	if err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-o", out, "-ldflags", b.LDFlags(b.LDExtra)}
	args = append(args, pgo...)
	args = append(args, b.GoFlags(goflags...)...)
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), b.Env()...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return b.Fixup(b, out)
}

// FixupELF is the loader's view for ELF loaders that place each PT_LOAD
// segment at its physical address (QEMU's -kernel, U-Boot's bootelf). It
// rewrites the writable PT_LOAD of an image built with b.LDFlags: its
// physical address becomes the first 64 KiB boundary after the read-only
// segments (in kseg0, which is how QEMU's malta loader and U-Boot images
// address RAM), and its memory size becomes its file size, so the loader
// neither needs RAM at the data segment's virtual address nor zeroes (and
// so backs) the BSS. The kernel maps the loaded pages at their virtual
// addresses and serves the BSS as demand-zero pages.
func FixupELF(b Board, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if ef.Class != elf.ELFCLASS32 || ef.Machine != elf.EM_MIPS {
		return fmt.Errorf("%s: not a 32-bit MIPS ELF", path)
	}
	var rw = -1
	var end uint64
	for i, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Flags&elf.PF_W != 0 {
			if rw >= 0 {
				return fmt.Errorf("%s: more than one writable segment", path)
			}
			rw = i
			continue
		}
		if p.Paddr < kseg0 {
			return fmt.Errorf("%s: read-only segment at %#x is not in kseg0 (built without gowrt's -T?)", path, p.Paddr)
		}
		if e := p.Paddr + p.Memsz; e > end {
			end = e
		}
	}
	if rw < 0 {
		return fmt.Errorf("%s: no writable segment", path)
	}
	p := ef.Progs[rw]
	if p.Vaddr != b.DataAddr {
		return fmt.Errorf("%s: data segment at %#x, want %#x (built without gowrt's -D?)", path, p.Vaddr, b.DataAddr)
	}
	// 64 KiB alignment keeps the data pages' physical cache colour equal
	// to their virtual one (the kernel reaches them through kseg0).
	paddr := (end + dataAlign - 1) &^ (dataAlign - 1)
	bo := ef.ByteOrder
	var hdr [52]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return err
	}
	phoff := int64(bo.Uint32(hdr[28:]))
	phentsize := int64(bo.Uint16(hdr[42:]))
	off := phoff + int64(rw)*phentsize
	var ph [32]byte
	if _, err := f.ReadAt(ph[:], off); err != nil {
		return err
	}
	if elf.ProgType(bo.Uint32(ph[0:])) != elf.PT_LOAD || uint64(bo.Uint32(ph[8:])) != p.Vaddr {
		return errors.New("program header table does not match debug/elf's view")
	}
	bo.PutUint32(ph[12:], uint32(paddr))
	bo.PutUint32(ph[20:], uint32(p.Filesz))
	_, err = f.WriteAt(ph[:], off)
	return err
}
