//go:build !mips && !mipsle

package boottest

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowrt/gowrt/internal/image"
)

// TestNoSoCLinkError: an image whose program links the kernel but no SoC
// package fails to link, and the error names the missing hooks.
func TestNoSoCLinkError(t *testing.T) {
	b, err := image.LookupBoard("malta-be")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "nosoc.elf")
	cmd := exec.Command("go", "build", "-o", out, "-ldflags", b.LDFlags(""), "./kernel/boottest/testdata/nosoc")
	cmd.Env = append(os.Environ(), b.Env()...)
	msg, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("a program with no SoC package linked")
	}
	// Each missing hook is named, until the linker stops at 20 errors
	// ("too many errors"); nothing else is missing.
	named := 0
	for _, hook := range append(append([]string{}, trapHooks...), bootHooks...) {
		if strings.Contains(string(msg), "relocation target github.com/gowrt/gowrt/kernel."+hook+" not defined") {
			named++
		}
	}
	relocs := strings.Count(string(msg), "relocation target ")
	hookRelocs := strings.Count(string(msg), "relocation target github.com/gowrt/gowrt/kernel.platform")
	if named < len(trapHooks)+len(bootHooks) && (!strings.Contains(string(msg), "too many errors") || named < 10) {
		t.Errorf("the link error names %d of the %d hooks:\n%s", named, len(trapHooks)+len(bootHooks), msg)
	}
	if relocs != hookRelocs {
		t.Errorf("the link error names missing symbols that are not platform hooks:\n%s", msg)
	}
	t.Logf("link error:\n%s", msg)
}

// TestBuildOnlyBoards builds firmware for every board QEMU cannot boot
// (AR71xx) with the board's link layout and loader fix-up, checks that the
// image has the kernel's layout and the SoC's platform hooks, and walks
// its trap path like TestTrapDiscipline: the hooks are generic functions
// instantiated for kseg1, whose register accesses are dictionary calls.
func TestBuildOnlyBoards(t *testing.T) {
	progs := map[string]string{"ar71xx": "./soc/ar71xx/testdata/fw"}
	n := 0
	for _, name := range image.Names() {
		b := image.Boards[name]
		if b.Bootable() {
			continue
		}
		n++
		prog, ok := progs[name]
		if !ok {
			t.Errorf("board %s: no test program to build", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			img := buildImage(t, name, prog)
			checkImageLayout(t, b, img)
			checkTrapDiscipline(t, img, false)
		})
	}
	if n == 0 {
		t.Fatal("no build-only board")
	}
	// gowrt build takes the board by name, too.
	if err := image.Build(context.Background(), image.Boards["ar71xx"], ".", "./soc/ar71xx/testdata/fw", filepath.Join(t.TempDir(), "fw.elf")); err != nil {
		t.Fatal(err)
	}
}

// checkImageLayout: entry, text and data where the board says, the data
// segment loaded right after the text (FixupELF), and a provider for every
// platform hook.
func checkImageLayout(t *testing.T, b image.Board, img string) {
	t.Helper()
	f, err := elf.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_MIPS || f.Class != elf.ELFCLASS32 {
		t.Fatalf("%s: not a 32-bit MIPS ELF", img)
	}
	if (f.ByteOrder.String() == "BigEndian") != (b.GOARCH == "mips") {
		t.Errorf("%s: byte order %v for GOARCH %s", img, f.ByteOrder, b.GOARCH)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]uint64{}
	for _, s := range syms {
		at[s.Name] = s.Value
	}
	if e, ok := at[b.Entry]; !ok || e != f.Entry {
		t.Errorf("entry %#x, %s at %#x", f.Entry, b.Entry, e)
	}
	for _, h := range append(append([]string{}, trapHooks...), bootHooks...) {
		if _, ok := at["github.com/gowrt/gowrt/kernel."+h]; !ok {
			t.Errorf("no provider of the platform hook %s", h)
		}
	}
	var textEnd uint64
	textAt := false
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		if p.Flags&elf.PF_W == 0 {
			textAt = textAt || p.Flags&elf.PF_X != 0 && p.Vaddr <= b.TextAddr && b.TextAddr < p.Vaddr+p.Memsz
			textEnd = max(textEnd, p.Paddr+p.Memsz)
			continue
		}
		if p.Vaddr != b.DataAddr {
			t.Errorf("data segment at %#x, want %#x", p.Vaddr, b.DataAddr)
		}
		if p.Paddr < textEnd || p.Paddr >= textEnd+0x10000 || p.Memsz != p.Filesz {
			t.Errorf("data segment loaded at %#x (text ends %#x), memsz %#x filesz %#x: not fixed up", p.Paddr, textEnd, p.Memsz, p.Filesz)
		}
	}
	if !textAt {
		t.Errorf("no executable segment holds the text address %#x", b.TextAddr)
	}
}

// TestReboot: reboot(2) reaches the platform's power-off and reset hooks.
// On malta, power-off goes through the PIIX4's ACPI PM1 control and QEMU
// shuts down; restart is the FPGA soft reset, which ends QEMU under
// -no-reboot. Both requests take effect a moment later, so the kernel may
// print "halted" first; had a hook done nothing, it would wait forever
// after that and the boot would time out.
func TestReboot(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		for _, what := range []string{"poweroff", "restart"} {
			r := boot(t, board, img, 32, "reboot:"+what)
			want := map[string]string{"poweroff": "gowrt: power off", "restart": "gowrt: restart"}[what]
			r.mustContain(t, "selftest: reboot "+what, want)
			if strings.Contains(r.out, "reboot returned") {
				t.Errorf("%s reboot:%s:\n%s", board, what, r.out)
			}
		}
	}
}
