//go:build !mips && !mipsle

package layering

import (
	"strings"
	"testing"
)

// TestKernelKnowsNoBoard: the kernel imports no SoC or board package; a
// board's SoC package provides the kernel's platform hooks instead.
func TestKernelKnowsNoBoard(t *testing.T) {
	forbid(t, []string{module + "/kernel"}, "the kernel links a SoC or board package", func(path string, _ pkgInfo) bool {
		return strings.HasPrefix(path, module+"/soc/") || strings.HasPrefix(path, module+"/board/") ||
			path == module+"/soc" || path == module+"/board"
	})
}
