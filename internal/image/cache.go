package image

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// Cache builds each (board, package) image once and hands out its path:
// boot tests that boot the same firmware in several configurations build
// it only once per test binary. It is safe for concurrent use.
type Cache struct {
	// Dir receives the images (a test's temporary directory).
	Dir string
	// BuildDir is where `go build` runs; package paths are relative to it.
	BuildDir string

	mu    sync.Mutex
	built map[string]string
}

// Build returns the image of pkg for the named board, building it on the
// first request. Extra go build flags (such as -tags) make a separate image.
func (c *Cache) Build(board, pkg string, goflags ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := strings.Join(append([]string{board, pkg}, goflags...), " ")
	if p, ok := c.built[key]; ok {
		return p, nil
	}
	b, err := LookupBoard(board)
	if err != nil {
		return "", err
	}
	out := filepath.Join(c.Dir, strings.NewReplacer("/", "_", ".", "_", " ", "_").Replace(key)+".elf")
	dir := c.BuildDir
	if dir == "" {
		dir = "."
	}
	if err := Build(context.Background(), b, dir, pkg, out, goflags...); err != nil {
		return "", fmt.Errorf("build %s for %s: %w", pkg, board, err)
	}
	if c.built == nil {
		c.built = map[string]string{}
	}
	c.built[key] = out
	return out, nil
}
