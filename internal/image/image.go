// Package image builds gowrt firmware images: it runs the stock Go toolchain
// with the kernel's linker layout and then fixes up the ELF so that boot
// loaders place the data segment right after the read-only segments.
package image

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Board describes how to build for one board.
type Board struct {
	Name   string // malta-be
	GOARCH string // mips or mipsle
	QEMU   string // qemu-system-mips
}

// Boards are the boards gowrt can build for.
var Boards = map[string]Board{
	"malta-be": {Name: "malta-be", GOARCH: "mips", QEMU: "qemu-system-mips"},
	"malta-le": {Name: "malta-le", GOARCH: "mipsle", QEMU: "qemu-system-mipsel"},
}

// LookupBoard returns the named board.
func LookupBoard(name string) (Board, error) {
	b, ok := Boards[name]
	if !ok {
		return Board{}, fmt.Errorf("unknown board %q (images are built for malta-be and malta-le)", name)
	}
	return b, nil
}

// Linker layout (kernel package doc): text at 0x80101000 in kseg0 (ELF
// headers at 0x80100000), data+BSS in the TLB-mapped kseg2 at 0xc0000000.
// (The data segment must sit above the text: Go 1.26's linker writes an
// all-zero data segment when -D is below -T, because it looks the data
// symbols up in a list ordered by section, not by address.)
const (
	TextAddr  uint64 = 0x80101000
	DataAddr  uint64 = 0xc0000000
	Entry            = "github.com/gowrt/gowrt/kernel.Entry"
	pageSize         = 0x1000
	dataAlign        = 0x10000
	kseg0            = 0x80000000
)

// LDFlags returns the linker flags for an image.
func LDFlags(extra string) string {
	f := fmt.Sprintf("-T %#x -D %#x -R %#x -E %s", TextAddr, DataAddr, pageSize, Entry)
	if extra != "" {
		f += " " + extra
	}
	return f
}

// Build compiles pkg for board into out. dir is the working directory for
// the go command (the module root or below). Extra go build flags may be
// given. Ending ctx stops the build.
func Build(ctx context.Context, b Board, dir, pkg, out string, goflags ...string) error {
	args := append([]string{"build", "-trimpath", "-o", out, "-ldflags", LDFlags("")}, goflags...)
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.GOARCH, "GOMIPS=softfloat", "CGO_ENABLED=0")
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return Fixup(out)
}

// Fixup rewrites the writable PT_LOAD of an image built with LDFlags: its
// physical address becomes the first 64 KiB boundary after the read-only
// segments (in
// kseg0, which is how QEMU's malta loader and U-Boot images address RAM), and
// its memory size becomes its file size, so the loader neither needs RAM at
// the data segment's virtual address nor zeroes (and so backs) the BSS. The
// kernel maps the loaded pages at their virtual addresses and serves the BSS
// as demand-zero pages.
func Fixup(path string) error {
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
	if p.Vaddr != DataAddr {
		return fmt.Errorf("%s: data segment at %#x, want %#x (built without gowrt's -D?)", path, p.Vaddr, DataAddr)
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
