package fwimage

import (
	"bytes"
	"encoding/binary"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/internal/image"
)

func bytesReader(b []byte) io.ReaderAt { return bytes.NewReader(b) }

func TestRawFirmware(t *testing.T) {
	e := firmwareELF(t, "./examples/hello")
	raw, load, entry, err := Raw(e)
	if err != nil {
		t.Fatal(err)
	}
	if load != uint32(image.KernelText-0x1000) {
		t.Errorf("load address %#x, want the ELF headers' page %#x", load, image.KernelText-0x1000)
	}
	if !bytes.HasPrefix(raw, []byte("\x7fELF")) {
		t.Error("raw image does not start with the ELF header the kernel reads")
	}
	if entry <= load || entry >= load+uint32(len(raw)) {
		t.Errorf("entry %#x outside the image", entry)
	}
	checkRawMatchesELF(t, e, raw, load)
}

// An ELF straight from the linker, without FixupELF, has its data segment
// at 0xc0000000: refused, naming the fix.
func TestRawRefusesUnfixedELF(t *testing.T) {
	b := image.Boards["malta-be"]
	out := filepath.Join(t.TempDir(), "hello.elf")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "-ldflags", b.LDFlags(""), "./examples/hello")
	cmd.Dir = ".."
	cmd.Env = append(cmd.Environ(), b.Env()...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	e := readFile(t, out)
	_, _, _, err := Raw(e)
	if err == nil || !strings.Contains(err.Error(), "FixupELF") || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("Raw of an ELF without FixupELF: %v, want the span refused naming FixupELF", err)
	}
}

// seg is a PT_LOAD for synthELF.
type seg struct {
	paddr, memsz uint32
	data         []byte
}

// synthELF writes a minimal big-endian ELF32 executable with the given
// PT_LOAD segments (file bytes after the program headers) and entry.
func synthELF(entry uint32, segs ...seg) []byte {
	const ehsize, phentsize = 52, 32
	be := binary.BigEndian
	h := make([]byte, ehsize+phentsize*len(segs))
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = 1, 2, 1 // ELFCLASS32, ELFDATA2MSB, EV_CURRENT
	be.PutUint16(h[16:], 2)    // ET_EXEC
	be.PutUint16(h[18:], 8)    // EM_MIPS
	be.PutUint32(h[20:], 1)
	be.PutUint32(h[24:], entry)
	be.PutUint32(h[28:], ehsize)
	be.PutUint16(h[40:], ehsize)
	be.PutUint16(h[42:], phentsize)
	be.PutUint16(h[44:], uint16(len(segs)))
	body := []byte{}
	for i, s := range segs {
		ph := h[ehsize+phentsize*i:]
		be.PutUint32(ph[0:], 1) // PT_LOAD
		be.PutUint32(ph[4:], uint32(len(h)+len(body)))
		be.PutUint32(ph[8:], s.paddr)
		be.PutUint32(ph[12:], s.paddr)
		be.PutUint32(ph[16:], uint32(len(s.data)))
		be.PutUint32(ph[20:], s.memsz)
		be.PutUint32(ph[24:], 5)
		be.PutUint32(ph[28:], 4)
		body = append(body, s.data...)
	}
	return append(h, body...)
}

func TestRawSynthetic(t *testing.T) {
	text := bytes.Repeat([]byte{0xaa}, 0x100)
	data := bytes.Repeat([]byte{0x55}, 0x40)
	t.Run("gap zero-filled, bss left out", func(t *testing.T) {
		// Listed out of address order on purpose.
		e := synthELF(0x80001010, seg{0x80002000, 0x1000, data}, seg{0x80001000, 0x100, text})
		raw, load, entry, err := Raw(e)
		if err != nil {
			t.Fatal(err)
		}
		want := append(append(append([]byte{}, text...), make([]byte, 0x1000-0x100)...), data...)
		if load != 0x80001000 || entry != 0x80001010 || !bytes.Equal(raw, want) {
			t.Fatalf("load %#x entry %#x, %d bytes; want 0x80001000, 0x80001010, %d bytes laid out", load, entry, len(raw), len(want))
		}
	})
	for _, c := range []struct {
		name, want string
		elf        []byte
	}{
		{"overlap", "overlap", synthELF(0x80001000, seg{0x80001000, 0x100, text}, seg{0x800010f0, 0x40, data})},
		{"bss overlaps next", "overlap", synthELF(0x80001000, seg{0x80001000, 0x2000, text}, seg{0x80002000, 0x40, data})},
		{"sparse", "more than 64 MiB", synthELF(0x80001000, seg{0x80001000, 0x100, text}, seg{0x84001000, 0x40, data})},
		{"entry outside", "entry point", synthELF(0x90000000, seg{0x80001000, 0x100, text})},
		{"no segment", "no PT_LOAD", synthELF(0x80001000)},
		{"file beyond memory", "larger than memory", synthELF(0x80001000, seg{0x80001000, 0x10, text})},
		{"ends beyond 4 GiB", "4 GiB", synthELF(0xffffff00, seg{0xffffff00, 0x200, text})},
		{"not an ELF", "bad magic", []byte("this is no ELF file, just text padding it out beyond 52 bytes")},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := Raw(c.elf)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Raw: %v, want an error containing %q", err, c.want)
			}
		})
	}
}
