//go:build !mips && !mipsle

package boottest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/image"
	"github.com/gowrt/gowrt/internal/qemu"
)

// arches are the boards every boot test runs on.
var arches = []string{"malta-be", "malta-le"}

var (
	images  = &image.Cache{}
	workDir string
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "gowrt-boottest")
	if err != nil {
		panic(err)
	}
	workDir = d
	images.Dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// buildImage builds pkg for board once per test binary run; goflags are
// extra go build flags (such as -tags).
func buildImage(t testing.TB, board, pkg string, goflags ...string) string {
	t.Helper()
	p, err := images.Build(board, pkg, goflags...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type bootResult struct {
	out  string
	code int // from "gowrt: exit N"; -1 if none
}

var exitRE = regexp.MustCompile(`(?m)^gowrt: exit (-?\d+)\r?$`)

// boot runs an image under QEMU and returns its console output.
func boot(t testing.TB, board, img string, memMiB int, appendArgs string, extra ...string) bootResult {
	t.Helper()
	return bootIn(t, board, img, memMiB, appendArgs, nil, extra...)
}

// bootIn is boot with the console's input.
func bootIn(t testing.TB, board, img string, memMiB int, appendArgs string, stdin io.Reader, extra ...string) bootResult {
	t.Helper()
	b, _ := image.LookupBoard(board)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := qemu.Machine{Board: b, Kernel: img, MemMiB: memMiB, Append: appendArgs, Extra: extra}.Command(ctx)
	var out bytes.Buffer
	cmd.Stdin = stdin
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	s := strings.ReplaceAll(out.String(), "\r\n", "\n")
	if ctx.Err() != nil {
		t.Fatalf("%s %s -m %d: timed out; output:\n%s", board, filepath.Base(img), memMiB, s)
	}
	if err != nil {
		t.Fatalf("%s: %v; output:\n%s", b.QEMU, err, s)
	}
	r := bootResult{out: s, code: -1}
	if m := exitRE.FindAllStringSubmatch(s, -1); m != nil {
		r.code, _ = strconv.Atoi(m[len(m)-1][1])
	}
	return r
}

func (r bootResult) mustContain(t testing.TB, what ...string) {
	t.Helper()
	for _, w := range what {
		if !strings.Contains(r.out, w) {
			t.Errorf("output lacks %q; output:\n%s", w, r.out)
		}
	}
}

func init() {
	// Tests build packages by import path; run the go command from the
	// module root whatever directory go test uses.
	if out, err := exec.Command("go", "env", "GOMOD").Output(); err == nil {
		if d := filepath.Dir(strings.TrimSpace(string(out))); d != "" {
			_ = os.Chdir(d)
		}
	}
	_ = fmt.Sprint
}
