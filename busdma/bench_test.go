package busdma_test

import (
	"testing"

	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/hwsim"
)

// BenchmarkSyncBaselineCopy is the same-run baseline: copying 1 KiB.
func BenchmarkSyncBaselineCopy(b *testing.B) {
	src, dst := make([]byte, 1024), make([]byte, 1024)
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkSyncPreWriteSim: PREWRITE of a 1 KiB TX buffer in the cache model.
func BenchmarkSyncPreWriteSim(b *testing.B) {
	_, tg := newTag(b, busdma.TagConfig{MaxSize: 1024})
	buf, _ := tg.Alloc(1024)
	m, _ := tg.NewMap()
	if _, err := m.Load(buf, busdma.ToDevice); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		buf[0]++ // a dirty line to write back
		if err := m.Sync(busdma.PreWrite); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncRXCycleSim: load, PREREAD, POSTREAD, unload of a 1 KiB RX
// buffer: the whole per-packet busdma cost of a receive.
func BenchmarkSyncRXCycleSim(b *testing.B) {
	_, tg := newTag(b, busdma.TagConfig{MaxSize: 1024})
	buf, _ := tg.Alloc(1024)
	m, _ := tg.NewMap()
	b.SetBytes(1024)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Load(buf, busdma.FromDevice); err != nil {
			b.Fatal(err)
		}
		_ = m.Sync(busdma.PreRead)
		_ = m.Sync(busdma.PostRead)
		_ = m.Unload()
	}
}

// BenchmarkSyncBounceSim: a misaligned TX load that bounces.
func BenchmarkSyncBounceSim(b *testing.B) {
	_, tg := newTag(b, busdma.TagConfig{MaxSize: 1024, Alignment: 64})
	raw := make([]byte, 2048)
	var buf []byte
	for i := range raw {
		if addr(raw[i:])%64 == 2 {
			buf = raw[i : i+1000]
			break
		}
	}
	m, _ := tg.NewMap()
	b.SetBytes(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Load(buf, busdma.ToDevice); err != nil {
			b.Fatal(err)
		}
		_ = m.Sync(busdma.PreWrite)
		_ = m.Unload()
	}
}

// overheadPlatform is a LineCache whose line function does nothing: the
// two benchmarks below measure what a sync costs around the cache loop,
// which is all RangeSync saves.
type overheadPlatform struct{ countingPlatform }

func (p *overheadPlatform) CacheCompletes() {}
func (p *overheadPlatform) LineOp(busdma.CacheOp) func(start, end, line uintptr) {
	return func(start, end, line uintptr) {}
}

// rxHeadMap is a 1536-byte receive buffer's map on overheadPlatform.
func rxHeadMap(b *testing.B) *busdma.Map {
	sys := hwsim.New(hwsim.Config{Seed: 1, NoEviction: true})
	tg, err := busdma.NewTag(&overheadPlatform{countingPlatform{Memory: sys.Mem}}, busdma.TagConfig{Name: "o", MaxSize: 1536, Alignment: 64})
	if err != nil {
		b.Fatal(err)
	}
	buf, _ := tg.Alloc(1536)
	m, _ := tg.NewMap()
	if _, err := m.Load(buf, busdma.FromDevice); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkSyncRangeHead: SyncRange's PostRead of a received frame's
// 128-byte head (pcnet before RangeSync), the baseline of
// BenchmarkRangeSyncHead.
func BenchmarkSyncRangeHead(b *testing.B) {
	m := rxHeadMap(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.SyncRange(busdma.PostRead, 0, 128)
	}
}

// BenchmarkRangeSyncHead: the same sync through a RangeSync bound once.
func BenchmarkRangeSyncHead(b *testing.B) {
	r, err := rxHeadMap(b).BindRange(busdma.PostRead)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Sync(0, 128)
	}
}
