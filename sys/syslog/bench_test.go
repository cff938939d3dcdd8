package syslog

import (
	"io"
	"log/slog"
	"testing"
)

// BenchmarkAdd measures adding one typical line: straight into the ring,
// through the ring's slog handler, and (the baseline) the same slog call
// into slog's TextHandler writing to io.Discard.
func BenchmarkAdd(b *testing.B) {
	rec := Record{Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "DHCPACK(br-lan) 192.168.1.100 aa:bb:cc:dd:ee:ff laptop"}
	b.Run("ring", func(b *testing.B) {
		r := NewRing(DefaultSize)
		b.ReportAllocs()
		for b.Loop() {
			r.Add(rec)
		}
	})
	logTo := func(b *testing.B, log *slog.Logger) {
		b.ReportAllocs()
		for b.Loop() {
			log.Info("DHCPACK", "iface", "br-lan", "ip", "192.168.1.100", "mac", "aa:bb:cc:dd:ee:ff", "host", "laptop")
		}
	}
	b.Run("slog-ring", func(b *testing.B) {
		logTo(b, slog.New(NewRing(DefaultSize).Handler(Daemon, "dhcpd", slog.LevelInfo)))
	})
	b.Run("slog-text-discard", func(b *testing.B) {
		logTo(b, slog.New(slog.NewTextHandler(io.Discard, nil)))
	})
}
