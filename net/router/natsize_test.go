package router

import (
	"testing"

	"github.com/gowrt/gowrt/net/nat"
)

// TestNATConnsFor: the connection table gets an entry per 16 KiB of RAM,
// Linux's classic conntrack default (2048 for 32 MiB), within its floor
// and nat's default.
func TestNATConnsFor(t *testing.T) {
	for _, c := range []struct {
		mib  uint32
		want int
	}{
		{8, minNATConns}, {16, minNATConns}, {20, 1280}, {32, 2048}, {64, 4096},
		{128, nat.DefaultMaxConns}, {512, nat.DefaultMaxConns},
	} {
		if got := natConnsFor(c.mib << 20); got != c.want {
			t.Errorf("%d MiB: %d entries, want %d", c.mib, got, c.want)
		}
	}
	// Off the gowrt kernel the nat package's default stands.
	if n := natConnsForRAM(); n != 0 {
		t.Errorf("on the host: %d, want 0 (the default)", n)
	}
}

func TestDNSCacheBytesFor(t *testing.T) {
	for _, c := range []struct {
		ram  uint32
		want int
	}{
		{0, 0}, // off the gowrt kernel: dnsfwd's default
		{4 << 20, 128 << 10},
		{16 << 20, 256 << 10},
		{32 << 20, 512 << 10},
		{64 << 20, 1 << 20},
		{256 << 20, 1 << 20},
	} {
		if got := dnsCacheBytesFor(c.ram); got != c.want {
			t.Errorf("dnsCacheBytesFor(%d MiB) = %d, want %d", c.ram>>20, got, c.want)
		}
	}
}
