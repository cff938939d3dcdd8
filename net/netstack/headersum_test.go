package netstack

import (
	"math/rand"
	"testing"

	"github.com/gowrt/gowrt/net/inetsum"
)

// TestHeaderSums: headerSums agrees with sum16 over the same runs of a
// frame, at every alignment of the frame (odd ones take sum16 itself) and
// every TCP header length.
func TestHeaderSums(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	mem := make([]byte, 128)
	for range 200 {
		rng.Read(mem)
		for off := 0; off < 4; off++ {
			for thl := 20; thl <= 60; thl += 4 {
				b := mem[off : off+tcpOff+thl]
				ip, tcp := headerSums(b, thl)
				wantIP := inetsum.Sum(b[ipOff:tcpOff])
				wantTCP := inetsum.Fold(uint32(inetsum.Sum(b[ipOff+12:ipOff+20])) + uint32(inetsum.Sum(b[tcpOff:])))
				if !sameSum(ip, wantIP) || !sameSum(tcp, wantTCP) {
					t.Fatalf("offset %d, thl %d: sums %#04x %#04x, want %#04x %#04x", off, thl, ip, tcp, wantIP, wantTCP)
				}
			}
		}
	}
}

// sameSum reports whether one's complement sums a and b are equal, the
// two zeros alike.
func sameSum(a, b uint16) bool { return a == b || a|b == 0xffff && a&b == 0 }
