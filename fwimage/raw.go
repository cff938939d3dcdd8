package fwimage

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
)

// MaxSpan is the largest distance from the lowest to the highest load
// address Raw accepts: more than any AR71xx-family board's RAM (32–256 MiB
// but a firmware is a few MiB), so a larger span means segments linked
// for different address spaces, not one image.
const MaxSpan = 64 << 20

// segment is one PT_LOAD with file bytes, at its load address.
type segment struct {
	lma, memsz uint64
	data       []byte
}

// Raw returns the flat binary a boot loader loads for the 32-bit ELF in
// elfBytes: the file bytes of every PT_LOAD at its physical (load)
// address p_paddr, gaps zero-filled, the BSS not included. load is the
// lowest load address, where the binary goes in memory; entry is the
// ELF's entry point, which must lie inside the binary. Overlapping
// segments and layouts spanning more than MaxSpan are refused.
func Raw(elfBytes []byte) (bin []byte, load, entry uint32, err error) {
	f, err := elf.NewFile(bytes.NewReader(elfBytes))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("fwimage: %w", err)
	}
	if f.Class != elf.ELFCLASS32 {
		return nil, 0, 0, fmt.Errorf("fwimage: %v ELF, want a 32-bit one", f.Class)
	}
	var segs []segment
	for i, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		if p.Filesz > p.Memsz {
			return nil, 0, 0, fmt.Errorf("fwimage: PT_LOAD %d: file size %#x larger than memory size %#x", i, p.Filesz, p.Memsz)
		}
		if p.Off > uint64(len(elfBytes)) || p.Filesz > uint64(len(elfBytes))-p.Off {
			return nil, 0, 0, fmt.Errorf("fwimage: PT_LOAD %d: file bytes %#x+%#x beyond the %#x-byte file", i, p.Off, p.Filesz, len(elfBytes))
		}
		if p.Paddr+p.Memsz > 1<<32 {
			return nil, 0, 0, fmt.Errorf("fwimage: PT_LOAD %d at %#x+%#x ends beyond 4 GiB", i, p.Paddr, p.Memsz)
		}
		data := make([]byte, p.Filesz)
		if _, err := io.ReadFull(p.Open(), data); err != nil {
			return nil, 0, 0, fmt.Errorf("fwimage: PT_LOAD %d: %w", i, err)
		}
		segs = append(segs, segment{lma: p.Paddr, memsz: p.Memsz, data: data})
	}
	if len(segs) == 0 {
		return nil, 0, 0, errors.New("fwimage: no PT_LOAD segment with file contents")
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].lma < segs[j].lma })
	for i := 1; i < len(segs); i++ {
		a, b := segs[i-1], segs[i]
		if a.lma+a.memsz > b.lma {
			return nil, 0, 0, fmt.Errorf("fwimage: PT_LOAD segments overlap: %#x+%#x and %#x", a.lma, a.memsz, b.lma)
		}
	}
	first, last := segs[0], segs[len(segs)-1]
	end := last.lma + uint64(len(last.data))
	if span := end - first.lma; span > MaxSpan {
		return nil, 0, 0, fmt.Errorf("fwimage: PT_LOAD segments span %#x..%#x (%d MiB, more than %d MiB): not one flat image "+
			"(is the data segment still at its kseg2 link address? internal/image.FixupELF loads it after the text)",
			first.lma, end, span>>20, MaxSpan>>20)
	}
	bin = make([]byte, end-first.lma)
	for _, s := range segs {
		copy(bin[s.lma-first.lma:], s.data)
	}
	if f.Entry < first.lma || f.Entry >= end {
		return nil, 0, 0, fmt.Errorf("fwimage: entry point %#x outside the image %#x..%#x", f.Entry, first.lma, end)
	}
	return bin, uint32(first.lma), uint32(f.Entry), nil
}
