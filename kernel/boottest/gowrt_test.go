//go:build !mips && !mipsle

package boottest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGowrtRun runs the README's command (gowrt run) and checks that the
// console is streamed and the firmware's exit code becomes the tool's.
func TestGowrtRun(t *testing.T) {
	tool := filepath.Join(t.TempDir(), "gowrt")
	if out, err := exec.Command("go", "build", "-o", tool, "./cmd/gowrt").CombinedOutput(); err != nil {
		t.Fatalf("build cmd/gowrt: %v\n%s", err, out)
	}
	out, err := exec.Command(tool, "run", "-board", "malta-be", "-timeout", "60s", "./examples/hello").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Hello from gowrt!") || !strings.Contains(string(out), "board: malta") {
		t.Fatalf("gowrt run ./examples/hello: %v\n%s", err, out)
	}
	cmd := exec.Command(tool, "run", "-board", "malta-le", "-m", "32", "-append", "exit:3", "-timeout", "60s", selftest)
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("gowrt run of a program calling os.Exit(3): %v\n%s", err, out)
	}
	// gowrt build writes an image QEMU boots (the boot tests use it too).
	img := filepath.Join(t.TempDir(), "fw.elf")
	if out, err := exec.Command(tool, "build", "-board", "malta-le", "-o", img, "./examples/hello").CombinedOutput(); err != nil {
		t.Fatalf("gowrt build: %v\n%s", err, out)
	}
	if fi, err := os.Stat(img); err != nil || fi.Size() < 1<<20 {
		t.Fatalf("gowrt build output: %v", err)
	}
}
