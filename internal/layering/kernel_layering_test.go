//go:build kernelhooks && !mips && !mipsle

// This rule does not hold yet: the kernel still imports soc/malta. The
// test is built only with the kernelhooks tag (go test -tags kernelhooks
// ./internal/layering); the lead removes the tag when the kernel's
// platform hooks land, and from then on make test runs it.

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
