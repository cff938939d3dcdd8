//go:build !mips && !mipsle

package mipsdma

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestCacheOpsOnQEMU boots testdata/cacheprog on QEMU malta in both byte
// orders: the Config1 line size is read in kernel mode (QEMU's 24Kf reports
// DL=3, 16-byte lines) and every Hit_* loop executes without an exception.
// QEMU does not model caches, so this proves the encodings and loop bounds;
// the cache semantics are proven against hwsim's cache model.
func TestCacheOpsOnQEMU(t *testing.T) {
	for _, board := range []string{"malta-be", "malta-le"} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		out, err := exec.CommandContext(ctx, "go", "run", "github.com/gowrt/gowrt/cmd/gowrt",
			"run", "-board", board, "./testdata/cacheprog").CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", board, err, out)
		}
		if !strings.Contains(string(out), "mipsdma: line 16, cache ops ok") {
			t.Fatalf("%s: unexpected console output:\n%s", board, out)
		}
	}
}
