package syslog

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"
)

func lastRecord(t *testing.T, r *Ring) Record {
	t.Helper()
	recs := r.Records(Filter{Facility: AnyFacility, Last: 1})
	if len(recs) != 1 {
		t.Fatal("no record")
	}
	return recs[0]
}

func TestHandlerLevels(t *testing.T) {
	r := NewRing(8192)
	log := slog.New(r.Handler(Daemon, "router", slog.LevelDebug-4))
	for _, c := range []struct {
		level slog.Level
		want  Severity
	}{
		{slog.LevelDebug - 4, Debug}, {slog.LevelDebug, Debug}, {slog.LevelInfo, Info}, {slog.LevelInfo + 2, Info},
		{slog.LevelWarn, Warning}, {slog.LevelError, Err}, {slog.LevelError + 4, Err},
	} {
		log.Log(t.Context(), c.level, "m")
		if rec := lastRecord(t, r); rec.Severity != c.want || rec.Facility != Daemon || rec.Service != "router" {
			t.Errorf("level %v: record %+v, want severity %v facility daemon service router", c.level, rec, c.want)
		}
	}

	var lv slog.LevelVar
	lv.Set(slog.LevelWarn)
	log = slog.New(r.Handler(User, "x", &lv))
	before := r.Stats().Written
	log.Info("dropped")
	log.Warn("kept")
	if got := r.Stats().Written - before; got != 1 {
		t.Fatalf("level Warn: %d records written for an Info and a Warn, want 1", got)
	}
	lv.Set(slog.LevelInfo)
	log.Info("now kept")
	if rec := lastRecord(t, r); rec.Msg != "now kept" {
		t.Errorf("after lowering the level: %q", rec.Msg)
	}
	if !r.Handler(User, "x", nil).Enabled(t.Context(), slog.LevelInfo) || r.Handler(User, "x", nil).Enabled(t.Context(), slog.LevelDebug) {
		t.Error("nil level should mean Info")
	}
}

type token string

func (tk token) LogValue() slog.Value { return slog.StringValue("REDACTED") }

func TestHandlerAttrs(t *testing.T) {
	r := NewRing(8192)
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	log := slog.New(r.Handler(Daemon, "router", slog.LevelInfo))
	for _, c := range []struct {
		log  func()
		svc  string
		want string
	}{
		{func() { log.Info("plain") }, "router", "plain"},
		{func() {
			log.Info("lease", "ip", "192.168.1.100", "n", 3, "u", uint64(7), "f", 1.5, "ok", true,
				"d", 1500*time.Millisecond, "t", ts, "err", errors.New("no route"))
		}, "router", `lease ip=192.168.1.100 n=3 u=7 f=1.5 ok=true d=1.5s t=2026-01-02T03:04:05.000006Z err="no route"`},
		{func() { log.Info("q", "host", `my "pc"`, "empty", "", "nl", "a\nb", "eq", "a=b", "uni", "café") },
			"router", `q host="my \"pc\"" empty="" nl="a\nb" eq="a=b" uni=café`},
		{func() { log.Info("svc", "service", "dhcpd", "x", 1) }, "dhcpd", "svc x=1"},
		{func() {
			log.Info("grp", slog.Group("req", "method", "GET", slog.Group("peer", "ip", "10.0.0.1")), slog.Group("empty"))
		},
			"router", "grp req.method=GET req.peer.ip=10.0.0.1"},
		{func() { log.Info("inline", slog.Group("", "a", 1), slog.Attr{}) }, "router", "inline a=1"},
		{func() { log.Info("valuer", "secret", token("hunter2"), "any", []int{1, 2}) }, "router", "valuer secret=REDACTED any=\"[1 2]\""},
		{func() { log.With("port", "lan1").WithGroup("link").With("speed", 1000).Info("up", "duplex", "full") },
			"router", "up port=lan1 link.speed=1000 link.duplex=full"},
		{func() { log.With("service", "sshd").Info("login", "user", "root") }, "sshd", "login user=root"},
		{func() { log.WithGroup("g").Info("in group", "service", "not-a-service") }, "router", "in group g.service=not-a-service"},
		{func() { log.WithGroup("").With().Info("no-ops") }, "router", "no-ops"},
	} {
		c.log()
		if rec := lastRecord(t, r); rec.Msg != c.want || rec.Service != c.svc {
			t.Errorf("got service %q msg %q\nwant service %q msg %q", rec.Service, rec.Msg, c.svc, c.want)
		}
	}
}

func TestHandlerTimeAndConcurrency(t *testing.T) {
	r := NewRing(1 << 20)
	h := r.Handler(Local0, "app", slog.LevelInfo)
	rec := slog.NewRecord(t0, slog.LevelInfo, "at t0", 0)
	if err := h.Handle(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	if got := lastRecord(t, r); !got.Time.Equal(t0) {
		t.Errorf("record time %v, want the slog record's %v", got.Time, t0)
	}
	log := slog.New(h)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := log.With("g", g)
			for i := range 200 {
				l.Info("msg", "i", i)
			}
		}()
	}
	wg.Wait()
	recs := r.Records(Filter{Facility: int(Local0), Contains: "msg g="})
	if len(recs) != 1600 {
		t.Fatalf("%d records from 8×200 concurrent logs, want 1600", len(recs))
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		seen[rec.Msg] = true
	}
	if len(seen) != 1600 || !seen[fmt.Sprintf("msg g=%d i=%d", 7, 199)] {
		t.Fatalf("%d distinct messages, want 1600 intact ones", len(seen))
	}
}
