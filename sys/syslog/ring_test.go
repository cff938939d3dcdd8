package syslog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

var t0 = time.Date(2026, 12, 1, 16, 31, 56, 0, time.UTC)

func TestRingAddRecords(t *testing.T) {
	r := NewRing(4096)
	r.Add(Record{Time: t0, Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "lease 192.168.1.100", Seq: 99})
	r.Add(Record{Facility: Kern, Severity: Warning, Service: "kernel", Msg: "eth0: link up"})
	recs := r.Records(All())
	if len(recs) != 2 {
		t.Fatalf("got %d records, want 2", len(recs))
	}
	want0 := Record{Seq: 1, Time: t0, Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "lease 192.168.1.100"}
	if got := recs[0]; !got.Time.Equal(want0.Time) || got.Seq != want0.Seq || got.Facility != want0.Facility ||
		got.Severity != want0.Severity || got.Service != want0.Service || got.Msg != want0.Msg {
		t.Errorf("record 0 = %+v, want %+v", got, want0)
	}
	if recs[1].Seq != 2 || recs[1].Time.IsZero() || time.Since(recs[1].Time) > time.Minute {
		t.Errorf("record 1: Seq %d Time %v; want Seq 2 and Time filled in with now", recs[1].Seq, recs[1].Time)
	}
	st := r.Stats()
	wantBytes := 2*headerLen + len("dhcpd") + len("lease 192.168.1.100") + len("kernel") + len("eth0: link up")
	if st != (Stats{Records: 2, Bytes: wantBytes, Size: 4096, Written: 2}) {
		t.Errorf("Stats = %+v, want 2 records of %d bytes", st, wantBytes)
	}
}

// TestRingOverwrite fills a ring many times over: the bytes held never
// exceed its size, the newest records are kept in order, and everything
// pushed out is counted.
func TestRingOverwrite(t *testing.T) {
	r := NewRing(MinSize)
	const n = 1000
	for i := range n {
		r.Add(Record{Time: t0, Service: "svc", Msg: fmt.Sprintf("message %d %s", i, strings.Repeat("x", i%50))})
		if st := r.Stats(); st.Bytes > st.Size {
			t.Fatalf("after %d adds: %d bytes in a %d-byte ring", i+1, st.Bytes, st.Size)
		}
	}
	recs := r.Records(All())
	st := r.Stats()
	if st.Written != n || st.Overwritten+uint64(len(recs)) != n || st.Records != len(recs) {
		t.Fatalf("Stats %+v with %d records readable; want Written %d = Overwritten + held", st, len(recs), n)
	}
	if len(recs) < 5 {
		t.Fatalf("only %d records kept in %d bytes", len(recs), MinSize)
	}
	for i, rec := range recs {
		wantSeq := uint64(n-len(recs)+i) + 1
		want := fmt.Sprintf("message %d %s", wantSeq-1, strings.Repeat("x", int(wantSeq-1)%50))
		if rec.Seq != wantSeq || rec.Msg != want {
			t.Fatalf("record %d: Seq %d Msg %q, want Seq %d Msg %q", i, rec.Seq, rec.Msg, wantSeq, want)
		}
	}
	// What is held plus the room for the next record must be more than
	// the ring: overwriting stops as soon as the new record fits.
	if free := st.Size - st.Bytes; free >= r.maxRecord() {
		t.Errorf("%d bytes free after overwriting: dropped more than needed", free)
	}
}

func TestRingTruncates(t *testing.T) {
	r := NewRing(MinSize)
	long := strings.Repeat("é", MinSize) // 2 bytes per rune: the cut must not split one
	r.Add(Record{Service: "svc", Msg: long})
	r.Add(Record{Service: "svc", Msg: "short"})
	recs := r.Records(All())
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	got := recs[0].Msg
	if !strings.HasSuffix(got, TruncatedMarker) || !strings.HasPrefix(long, strings.TrimSuffix(got, TruncatedMarker)) {
		t.Fatalf("truncated message %q: want a prefix of the original ending in %q", got, TruncatedMarker)
	}
	if !utf8.ValidString(got) {
		t.Errorf("truncated message is not valid UTF-8: %q", got)
	}
	if n := headerLen + len("svc") + len(got); n > MinSize/4 || n < MinSize/4-1 {
		t.Errorf("truncated record is %d bytes, want a quarter of the ring (%d, less a split rune)", n, MinSize/4)
	}
	if recs[1].Msg != "short" {
		t.Errorf("record after the truncated one: %q", recs[1].Msg)
	}
	if st := r.Stats(); st.Truncated != 1 {
		t.Errorf("Truncated = %d, want 1", st.Truncated)
	}
	// A long service name is cut to MaxService.
	r.Add(Record{Service: strings.Repeat("s", 300), Msg: "m"})
	if recs := r.Records(Filter{Facility: AnyFacility, Last: 1}); recs[0].Service != strings.Repeat("s", MaxService) {
		t.Errorf("service %q, want %d bytes", recs[0].Service, MaxService)
	}
}

func TestNewRingSizes(t *testing.T) {
	for _, c := range []struct{ in, want int }{{0, DefaultSize}, {-5, DefaultSize}, {10, MinSize}, {100000, 100000}} {
		if got := NewRing(c.in).Stats().Size; got != c.want {
			t.Errorf("NewRing(%d) size %d, want %d", c.in, got, c.want)
		}
	}
}

// TestAddAllocs proves that Add of a record whose strings exist encodes
// into the ring without allocating, also while overwriting.
func TestAddAllocs(t *testing.T) {
	r := NewRing(MinSize)
	rec := Record{Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "DHCPACK(br-lan) 192.168.1.100 aa:bb:cc:dd:ee:ff host"}
	long := Record{Service: "x", Msg: strings.Repeat("y", 2*MinSize)}
	if a := testing.AllocsPerRun(1000, func() { r.Add(rec) }); a != 0 {
		t.Errorf("Add: %v allocations, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() { r.Add(long) }); a != 0 {
		t.Errorf("Add of a truncated record: %v allocations, want 0", a)
	}
	w := r.Writer(Kern, Info, "kernel")
	line := []byte("[    1.234567] eth0: link up\n")
	if a := testing.AllocsPerRun(1000, func() { w.Write(line) }); a != 0 {
		t.Errorf("Writer.Write: %v allocations, want 0", a)
	}
	if st := r.Stats(); st.Overwritten == 0 {
		t.Fatal("the ring never overwrote: the test did not cover it")
	}
}

func TestFilters(t *testing.T) {
	r := NewRing(8192)
	add := func(fac Facility, sev Severity, svc, msg string) {
		r.Add(Record{Time: t0, Facility: fac, Severity: sev, Service: svc, Msg: msg})
	}
	add(Kern, Emerg, "kernel", "panic soon")         // 1
	add(Daemon, Err, "dhcpd", "no free leases")      // 2
	add(Daemon, Info, "dhcpd", "DHCPACK 192.0.2.10") // 3
	add(Auth, Notice, "sshd", "login root from lan") // 4
	add(Daemon, Debug, "dnsmasq", "query A example") // 5
	add(Cron, Warning, "cron", "job late")           // 6
	seqs := func(f Filter) string {
		var s []string
		for _, rec := range r.Records(f) {
			s = append(s, fmt.Sprint(rec.Seq))
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		name string
		f    Filter
		want string
	}{
		{"all", All(), "1,2,3,4,5,6"},
		{"facility 0 is kern", Filter{}, "1"},
		{"daemon", Filter{Facility: int(Daemon)}, "2,3,5"},
		{"min warning", Filter{Facility: AnyFacility, MinSeverity: Warning}, "1,2,6"},
		{"min debug", Filter{Facility: AnyFacility, MinSeverity: Debug}, "1,2,3,4,5,6"},
		{"emerg only", Filter{Facility: AnyFacility, EmergOnly: true}, "1"},
		{"service", Filter{Facility: AnyFacility, Service: "dhcpd"}, "2,3"},
		{"contains msg", Filter{Facility: AnyFacility, Contains: "192.0.2"}, "3"},
		{"contains service", Filter{Facility: AnyFacility, Contains: "dns"}, "5"},
		{"last", Filter{Facility: AnyFacility, Last: 2}, "5,6"},
		{"last of service", Filter{Facility: AnyFacility, Service: "dhcpd", Last: 1}, "3"},
		{"after", Filter{Facility: AnyFacility, After: 4}, "5,6"},
		{"combined", Filter{Facility: int(Daemon), MinSeverity: Info, Last: 5}, "2,3"},
	} {
		if got := seqs(c.f); got != c.want {
			t.Errorf("%s: %+v selects %q, want %q", c.name, c.f, got, c.want)
		}
	}
}

func TestFollow(t *testing.T) {
	r := NewRing(4096)
	for i := range 5 {
		r.Add(Record{Service: "a", Msg: fmt.Sprint("old ", i)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Record, 100)
	done := make(chan error, 1)
	go func() {
		done <- r.Follow(ctx, Filter{Facility: AnyFacility, Service: "a", Last: 2}, func(rec Record) error {
			got <- rec
			return nil
		})
	}()
	next := func() Record {
		t.Helper()
		select {
		case rec := <-got:
			return rec
		case <-time.After(5 * time.Second):
			t.Fatal("Follow delivered nothing within 5 s")
			return Record{}
		}
	}
	if a, b := next(), next(); a.Msg != "old 3" || b.Msg != "old 4" {
		t.Fatalf("backlog %q %q, want the last 2", a.Msg, b.Msg)
	}
	// New records wake the follower; a filtered-out one is skipped.
	r.Add(Record{Service: "b", Msg: "other service"})
	r.Add(Record{Service: "a", Msg: "new 1"})
	if rec := next(); rec.Msg != "new 1" || rec.Seq != 7 {
		t.Fatalf("got %+v, want new 1 with Seq 7", rec)
	}
	// Many concurrent writers: every record arrives once, in order.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				r.Add(Record{Service: "a", Msg: fmt.Sprintf("w%d %d", w, i)})
			}
		}()
	}
	wg.Wait()
	last := uint64(7)
	for range 100 {
		rec := next()
		if rec.Seq <= last {
			t.Fatalf("Seq %d after %d: out of order or repeated", rec.Seq, last)
		}
		last = rec.Seq
	}
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatalf("Follow returned %v after cancel, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Follow did not return after cancel")
	}
	if len(got) != 0 {
		t.Fatalf("%d unexpected extra records", len(got))
	}
}

func TestFollowStopsOnError(t *testing.T) {
	r := NewRing(4096)
	r.Add(Record{Msg: "one"})
	r.Add(Record{Msg: "two"})
	errStop := fmt.Errorf("stop")
	n := 0
	err := r.Follow(context.Background(), All(), func(Record) error { n++; return errStop })
	if err != errStop || n != 1 {
		t.Fatalf("Follow returned %v after %d calls, want fn's error after 1", err, n)
	}
}
