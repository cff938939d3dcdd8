//go:build !mips && !mipsle

package boottest

import (
	"regexp"
	"testing"
)

var netsshRAM = regexp.MustCompile(`netssh: ram (\d+) KiB total, (\d+) KiB used, peak (\d+) KiB`)

// TestNetSSH32 boots a program linking net/http and x/crypto/ssh (and the
// 32 MiB FIPS DRBG array in BSS) on a 32 MiB board: it only fits because
// untouched BSS costs no RAM.
func TestNetSSH32(t *testing.T) {
	for _, board := range arches {
		img := buildImage(t, board, "./kernel/boottest/progs/netssh")
		r := boot(t, board, img, 32, "", icount...)
		r.mustContain(t, "ssh: host key SHA256:", "http: 200 hello router", "netssh: ok")
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", board, r.code, r.out)
		}
		m := netsshRAM.FindStringSubmatch(r.out)
		if m == nil {
			t.Fatalf("%s: no RAM report\n%s", board, r.out)
		}
		t.Logf("%s -m 32: net/http+ssh program uses %s KiB (peak %s KiB) of %s KiB", board, m[2], m[3], m[1])
	}
}
