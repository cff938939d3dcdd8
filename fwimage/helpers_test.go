package fwimage

import (
	"context"
	"debug/elf"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gowrt/gowrt/internal/image"
)

// buildDir holds the firmware ELFs the tests build, once per package.
var buildDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "fwimage-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

type built struct {
	once sync.Once
	elf  []byte
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*built{}
)

// firmwareELF builds pkg (relative to the module root) for board malta-be
// with internal/image.Build, FixupELF included, as gowrt build does, and
// returns the ELF.
func firmwareELF(t *testing.T, pkg string) []byte {
	t.Helper()
	buildsMu.Lock()
	b := builds[pkg]
	if b == nil {
		b = &built{}
		builds[pkg] = b
	}
	buildsMu.Unlock()
	b.once.Do(func() {
		out := filepath.Join(buildDir, filepath.Base(pkg)+".elf")
		if b.err = image.Build(context.Background(), image.Boards["malta-be"], "..", pkg, out); b.err != nil {
			return
		}
		b.elf, b.err = os.ReadFile(out)
	})
	if b.err != nil {
		t.Fatalf("building %s: %v", pkg, b.err)
	}
	return b.elf
}

// checkRawMatchesELF compares raw, loaded at load, with the ELF's PT_LOAD
// file contents at their load addresses (read with debug/elf, not with
// Raw's code path), and checks that every other byte is zero.
func checkRawMatchesELF(t *testing.T, elfBytes, raw []byte, load uint32) {
	t.Helper()
	f, err := elf.NewFile(bytesReader(elfBytes))
	if err != nil {
		t.Fatal(err)
	}
	covered := make([]bool, len(raw))
	n := 0
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Filesz == 0 {
			continue
		}
		n++
		off := int64(p.Paddr) - int64(load)
		if off < 0 || off+int64(p.Filesz) > int64(len(raw)) {
			t.Fatalf("PT_LOAD at %#x+%#x outside the raw image %#x+%#x", p.Paddr, p.Filesz, load, len(raw))
		}
		want := elfBytes[p.Off : p.Off+p.Filesz]
		got := raw[off : off+int64(p.Filesz)]
		if string(want) != string(got) {
			t.Fatalf("PT_LOAD at %#x: raw image differs from the ELF's file bytes", p.Paddr)
		}
		for i := off; i < off+int64(p.Filesz); i++ {
			covered[i] = true
		}
	}
	if n < 3 {
		t.Fatalf("%d PT_LOAD segments with contents, want text, rodata and data", n)
	}
	for i, c := range covered {
		if !c && raw[i] != 0 {
			t.Fatalf("byte %#x of the raw image is in no segment but %#x, not zero", i, raw[i])
		}
	}
	if !covered[0] || !covered[len(raw)-1] {
		t.Fatal("raw image starts or ends outside a segment")
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
