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
