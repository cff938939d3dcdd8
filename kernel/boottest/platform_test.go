//go:build !mips && !mipsle

package boottest

import (
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
	// The linker stops after 20 errors; it names every hook before that.
	for _, hook := range append(append([]string{}, trapHooks...), bootHooks...) {
		want := "relocation target github.com/gowrt/gowrt/kernel." + hook + " not defined"
		if !strings.Contains(string(msg), want) {
			t.Errorf("link error lacks %q:\n%s", want, msg)
		}
	}
	t.Logf("link error:\n%s", msg)
}

// TestReboot: reboot(2) reaches the platform's power-off and reset hooks.
// On malta, power-off goes through the PIIX4's ACPI PM1 control and QEMU
// shuts down; had the hook not worked, the kernel would say "halted" and
// wait forever (the boot would time out); restart is the FPGA soft reset,
// which ends QEMU under -no-reboot.
func TestReboot(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, selftest)
		for _, what := range []string{"poweroff", "restart"} {
			r := boot(t, board, img, 32, "reboot:"+what)
			want := map[string]string{"poweroff": "gowrt: power off", "restart": "gowrt: restart"}[what]
			r.mustContain(t, "selftest: reboot "+what, want)
			if strings.Contains(r.out, "halted") || strings.Contains(r.out, "reboot returned") {
				t.Errorf("%s reboot:%s:\n%s", board, what, r.out)
			}
		}
	}
}
