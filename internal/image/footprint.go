package image

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Footprint is what an image costs the board: bytes of flash and of RAM.
type Footprint struct {
	File int64 // the ELF file, debug information included

	// The loaded sections by kind, bytes.
	Text    uint64 // machine code (.text)
	ROData  uint64 // .rodata, .typelink, .itablink
	PCLNTab uint64 // .gopclntab: the runtime's function tables (stack maps, unwinding)
	Data    uint64 // initialised data (.data, .noptrdata and the Go headers)
	BSS     uint64 // zero-initialised data; the kernel backs only the pages touched

	// Load is the bytes of the PT_LOAD segments' file images: what a boot
	// loader copies, and what a flash image compresses.
	Load uint64
	// RAM is the physical RAM the loaded image occupies at boot under
	// gowrt's kernel: from the ELF headers at the start of kseg0's image
	// area to the end of the data segment's physical copy (FixupELF
	// aligns it to 64 KiB), plus the kernel's first megabyte of kseg0
	// (vectors, page directory, kernel state, stacks), of which the
	// kernel gives about 560 KiB it does not use back to the frame pool.
	RAM uint64

	load []byte // the segments' contents, for XZ
}

// KernelArea is the RAM below the image that the kernel keeps for itself
// (package kernel, layout_mipsx.go: imageBase is kseg0 + 1 MiB).
const KernelArea = 1 << 20

// ReadFootprint measures the image at path, built by Build for a kseg0
// board (the malta and ar71xx boards).
func ReadFootprint(path string) (Footprint, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Footprint{}, err
	}
	f, err := elf.Open(path)
	if err != nil {
		return Footprint{}, err
	}
	defer f.Close()
	fp := Footprint{File: st.Size()}
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		switch {
		case s.Type == elf.SHT_NOBITS:
			fp.BSS += s.Size
		case s.Name == ".text":
			fp.Text += s.Size
		case s.Name == ".gopclntab":
			fp.PCLNTab += s.Size
		case s.Flags&elf.SHF_WRITE != 0:
			fp.Data += s.Size
		case s.Type == elf.SHT_PROGBITS:
			fp.ROData += s.Size
		}
	}
	var lo, hi uint64
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		fp.Load += p.Filesz
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return Footprint{}, fmt.Errorf("%s: segment at %#x: %w", path, p.Vaddr, err)
		}
		fp.load = append(fp.load, b...)
		if lo == 0 || p.Paddr < lo {
			lo = p.Paddr
		}
		if e := p.Paddr + p.Filesz; e > hi {
			hi = e
		}
	}
	if lo == 0 {
		return Footprint{}, fmt.Errorf("%s: no loadable segment", path)
	}
	fp.RAM = KernelArea + (hi-lo+pageSize-1)&^(pageSize-1)
	return fp, nil
}

// XZ returns the size of the load segments compressed with xz -9e (xz(1);
// xz has no branch filter for MIPS code): close to what an
// LZMA-compressed flash image of the firmware takes.
func (fp Footprint) XZ() (int64, error) {
	cmd := exec.Command("xz", "-c", "-T1", "--format=xz", "-9e")
	cmd.Stdin = bytes.NewReader(fp.load)
	var out bytes.Buffer
	cmd.Stdout = &out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("xz: %v: %s", err, stderr.String())
	}
	return int64(out.Len()), nil
}

// PackageSizes returns the bytes of code and data each Go package
// contributes to the loaded image (symbol sizes from the ELF symbol table,
// BSS excluded), keyed by import path; the runtime's type descriptors and
// function metadata go under "<type>" and "<go>". The function tables
// (.gopclntab) are not in symbols; they grow with code, about 0.6 bytes
// per byte of text.
func PackageSizes(path string) (map[string]uint64, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, s := range syms {
		if s.Section >= elf.SectionIndex(len(f.Sections)) || s.Size == 0 {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type == elf.SHT_NOBITS || sec.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		out[SymbolPackage(s.Name)] += s.Size
	}
	return out, nil
}

// SymbolPackage returns the import path of a Go symbol name:
// "net/http.(*Server).Serve" → "net/http", "gvisor.dev/gvisor/pkg/tcpip/stack.New"
// → "gvisor.dev/gvisor/pkg/tcpip/stack"; "type:…" → "<type>", "go:…" → "<go>".
func SymbolPackage(name string) string {
	switch {
	case strings.HasPrefix(name, "type:"):
		return "<type>"
	case strings.HasPrefix(name, "go:"):
		return "<go>"
	}
	slash := strings.LastIndexByte(name, '/')
	dot := strings.IndexByte(name[slash+1:], '.')
	if dot < 0 {
		return name
	}
	// The linker escapes dots in a path's last element ("yaml.v3" is
	// "yaml%2ev3" in symbol names, cmd/internal/objabi.PathToPrefix).
	return strings.ReplaceAll(name[:slash+1+dot], "%2e", ".")
}

// Exclusive returns the packages of deps that only importers of one of
// roots reach: the packages leaving the image if roots were not imported.
// graph maps each package to its imports; main is the firmware's main
// package.
func Exclusive(graph map[string][]string, main string, roots ...string) []string {
	cut := map[string]bool{}
	for _, r := range roots {
		cut[r] = true
	}
	reach := func(skip map[string]bool) map[string]bool {
		seen := map[string]bool{}
		stack := []string{main}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[p] || skip[p] {
				continue
			}
			seen[p] = true
			stack = append(stack, graph[p]...)
		}
		return seen
	}
	all, kept := reach(nil), reach(cut)
	var out []string
	for p := range all {
		if !kept[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
