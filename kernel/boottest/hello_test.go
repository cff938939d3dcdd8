//go:build !mips && !mipsle

package boottest

import (
	"regexp"
	"strconv"
	"testing"
)

var ramRE = regexp.MustCompile(`ram: (\d+) KiB total, (\d+) KiB used`)

// TestHello boots examples/hello on both byte orders at 32 and 128 MiB.
func TestHello(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./examples/hello")
		for _, mem := range []int{32, 128} {
			r := boot(t, board, img, mem, "")
			r.mustContain(t, "Hello from gowrt!", "board: malta")
			if r.code != 0 {
				t.Errorf("%s -m %d: exit code %d, want 0\n%s", board, mem, r.code, r.out)
			}
			m := ramRE.FindStringSubmatch(r.out)
			if m == nil {
				t.Fatalf("%s -m %d: no ram line\n%s", board, mem, r.out)
			}
			total, _ := strconv.Atoi(m[1])
			used, _ := strconv.Atoi(m[2])
			if total != mem<<10 {
				t.Errorf("%s -m %d: kernel reports %d KiB RAM", board, mem, total)
			}
			// The image is ~2.5 MiB; a hello must stay well below the
			// 8+ MiB a kernel without demand paging needs.
			if used > 6<<10 {
				t.Errorf("%s -m %d: hello uses %d KiB", board, mem, used)
			}
			t.Logf("%s -m %d: RAM used %d KiB", board, mem, used)
		}
	}
}
