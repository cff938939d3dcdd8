package syslog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The examples of RFC 5424 section 6.5, "BOM" standing for the UTF-8
// byte order mark as in the RFC's text.
func TestMessage5424RFCExamples(t *testing.T) {
	zone := time.FixedZone("", -7*3600)
	for _, c := range []struct {
		m    Message5424
		want string
	}{
		{ // Example 1, with no STRUCTURED-DATA
			Message5424{Facility: Auth, Severity: Crit, Time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, time.UTC),
				Hostname: "mymachine.example.com", AppName: "su", MsgID: "ID47",
				Msg: "'su root' failed for lonvick on /dev/pts/8", UTF8: true},
			"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - BOM'su root' failed for lonvick on /dev/pts/8",
		},
		{ // Example 2
			Message5424{Facility: Local4, Severity: Notice, Time: time.Date(2003, 8, 24, 5, 14, 15, 3000, zone),
				Hostname: "192.0.2.1", AppName: "myproc", ProcID: "8710", Msg: "%% It's time to make the do-nuts."},
			"<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
		},
		{ // Example 3
			Message5424{Facility: Local4, Severity: Notice, Time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, time.UTC),
				Hostname: "mymachine.example.com", AppName: "evntslog", MsgID: "ID47",
				StructuredData: `[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"]`,
				Msg:            "An application event log entry...", UTF8: true},
			`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] BOMAn application event log entry...`,
		},
		{ // Example 4: no MSG
			Message5424{Facility: Local4, Severity: Notice, Time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, time.UTC),
				Hostname: "mymachine.example.com", AppName: "evntslog", MsgID: "ID47",
				StructuredData: `[exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`},
			`<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]`,
		},
	} {
		want := strings.Replace(c.want, "BOM", "\xEF\xBB\xBF", 1)
		if got := string(c.m.Append(nil)); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

func TestFormat5424(t *testing.T) {
	// Example 1's record as gowrt has it: no MSGID, so NILVALUE, and an
	// ASCII message is MSG-ANY (no BOM).
	rec := Record{Seq: 1, Time: time.Date(2003, 10, 11, 22, 14, 15, 3e6, time.UTC), Facility: Auth, Severity: Crit,
		Service: "su", Msg: "'su root' failed for lonvick on /dev/pts/8"}
	if got, want := string(Format5424(nil, rec, "mymachine.example.com")),
		"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - - - 'su root' failed for lonvick on /dev/pts/8"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Local time goes out in UTC, to the microsecond (nanoseconds cut);
	// a service with spaces and non-ASCII is sanitized and cut to 48;
	// UTF-8 text gets the BOM; no hostname, no time: NILVALUE.
	cet := time.FixedZone("CET", 3600)
	for _, c := range []struct {
		rec  Record
		host string
		want string
	}{
		{Record{Time: time.Date(2026, 12, 1, 17, 31, 56, 123456789, cet), Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "ack"},
			"gowrt", "<30>1 2026-12-01T16:31:56.123456Z gowrt dhcpd - - - ack"},
		{Record{Time: time.Date(2026, 12, 1, 16, 31, 56, 0, time.UTC), Facility: Local7, Severity: Debug, Service: "my svc\tñ", Msg: "x"},
			"", "<191>1 2026-12-01T16:31:56Z - my_svc___ - - - x"},
		{Record{Facility: Kern, Severity: Emerg, Service: strings.Repeat("a", 60), Msg: "température"},
			"host name", "<0>1 - host_name " + strings.Repeat("a", 48) + " - - - \xEF\xBB\xBFtempérature"},
		{Record{Facility: User, Severity: Notice, Msg: "bad \xff utf8"}, "h", "<13>1 - h - - - - bad \xff utf8"},
		{Record{Facility: User, Severity: Notice}, "h", "<13>1 - h - - - -"},
	} {
		if got := string(Format5424(nil, c.rec, c.host)); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// parsed5424 is a datagram read back by parse5424, the test's own reader
// of the RFC 5424 section 6 syntax (header fields split at spaces, SD
// "-" only, as gowrt sends).
type parsed5424 struct {
	pri                               int
	time                              time.Time
	host, app, procID, msgID, sd, msg string
}

func parse5424(t *testing.T, b []byte) parsed5424 {
	t.Helper()
	s := string(b)
	end := strings.IndexByte(s, '>')
	if !strings.HasPrefix(s, "<") || end < 2 || end > 4 {
		t.Fatalf("%q: no <PRI>", s)
	}
	var p parsed5424
	var err error
	if p.pri, err = strconv.Atoi(s[1:end]); err != nil || p.pri > 191 {
		t.Fatalf("%q: bad PRI", s)
	}
	f := strings.SplitN(s[end+1:], " ", 8)
	if len(f) < 7 || f[0] != "1" {
		t.Fatalf("%q: want VERSION 1 and 6 more header fields", s)
	}
	if p.time, err = time.Parse(time.RFC3339Nano, f[1]); err != nil {
		t.Fatalf("%q: TIMESTAMP: %v", s, err)
	}
	p.host, p.app, p.procID, p.msgID, p.sd = f[2], f[3], f[4], f[5], f[6]
	if len(f) == 8 {
		p.msg = strings.TrimPrefix(f[7], "\xEF\xBB\xBF")
	}
	return p
}

// waitFollowing waits until a Follow on r is waiting for new records.
func waitFollowing(t *testing.T, r *Ring) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		r.mu.Lock()
		waiting := r.notify != nil
		r.mu.Unlock()
		if waiting {
			return
		}
	}
	t.Fatal("Remote.Run did not start following the ring")
}

func TestRemoteUDP(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	conn, err := net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	r := NewRing(DefaultSize)
	r.Add(Record{Service: "early", Msg: "before Run: not forwarded"})
	m := NewRemote(r, func(b []byte) error { _, err := conn.Write(b); return err }, "gowrt-test")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitFollowing(t, r)

	log := slog.New(r.Handler(Daemon, "router", slog.LevelDebug))
	start := time.Now()
	const n = 20
	for i := range n {
		log.Warn("port down", "service", "netifd", "port", fmt.Sprintf("lan%d", i))
		time.Sleep(time.Millisecond) // a burst longer than the queue is TestRemoteLoss's
	}
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	for i := range n {
		k, err := srv.Read(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		p := parse5424(t, buf[:k])
		want := parsed5424{pri: int(Daemon)*8 + int(Warning), host: "gowrt-test", app: "netifd", procID: "-", msgID: "-", sd: "-",
			msg: fmt.Sprintf("port down port=lan%d", i)}
		want.time = p.time
		if p != want {
			t.Fatalf("datagram %d = %+v, want %+v", i, p, want)
		}
		if p.time.Location() != time.UTC || p.time.Before(start.Add(-time.Second)) || time.Since(p.time) > time.Minute {
			t.Errorf("datagram %d time %v: want UTC, now", i, p.time)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v, want nil", err)
	}
	if sent, lost := m.Stats(); sent != n || lost != 0 {
		t.Fatalf("Stats: sent %d lost %d, want %d and 0", sent, lost, n)
	}
}

// TestRemoteLoss: a stuck sender never blocks Add; the queue holds
// RemoteQueue records and everything else is counted lost, as are
// send errors.
func TestRemoteLoss(t *testing.T) {
	r := NewRing(DefaultSize)
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	fail := errors.New("network unreachable")
	m := NewRemote(r, func(b []byte) error {
		<-release
		mu.Lock()
		defer mu.Unlock()
		got = append(got, string(b))
		if strings.HasSuffix(string(b), "fail") {
			return fail
		}
		return nil
	}, "h")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitFollowing(t, r)

	const n = 500
	added := make(chan struct{})
	go func() {
		for i := range n {
			msg := "ok"
			if i%2 == 1 {
				msg = "fail"
			}
			r.Add(Record{Service: "s", Msg: msg})
		}
		close(added)
	}()
	select {
	case <-added:
	case <-time.After(5 * time.Second):
		t.Fatal("Add blocked behind a stuck remote sender")
	}
	// Let Run take in everything, then unblock the sender and stop.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, lost := m.Stats(); lost >= n-RemoteQueue-1 {
			break
		}
	}
	close(release)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if sent, lost := m.Stats(); sent+lost == n {
			break
		}
	}
	cancel()
	<-done
	sent, lost := m.Stats()
	mu.Lock()
	tried := len(got)
	var fails uint64
	for _, g := range got {
		if strings.HasSuffix(g, "fail") {
			fails++
		}
	}
	mu.Unlock()
	if sent+lost != n {
		t.Fatalf("sent %d + lost %d != %d added", sent, lost, n)
	}
	// The sender held one record while the queue filled: at most
	// RemoteQueue+1 reached it, the rest were dropped.
	if tried > RemoteQueue+1 || tried < RemoteQueue {
		t.Errorf("%d records reached the sender, want the queue's %d (+1 in hand)", tried, RemoteQueue)
	}
	if sent != uint64(tried)-fails || lost != n-uint64(tried)+fails {
		t.Errorf("sent %d lost %d with %d sends of which %d failed", sent, lost, tried, fails)
	}
}

// TestRemoteOverwritten: records the ring overwrote before Run read
// them are counted lost from the gap in Seq.
func TestRemoteOverwritten(t *testing.T) {
	r := NewRing(MinSize)
	var sent []uint64
	var mu sync.Mutex
	m := NewRemote(r, func(b []byte) error { mu.Lock(); sent = append(sent, 1); mu.Unlock(); return nil }, "h")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	waitFollowing(t, r)
	// Add many records under one lock hold so Follow cannot run in
	// between: most are overwritten before it reads them.
	r.mu.Lock()
	for range 1000 {
		r.addLocked(time.Now(), User, Info, "s", "a message long enough to fill the small ring fast", nil)
	}
	r.mu.Unlock()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if s, l := m.Stats(); s+l == 1000 {
			break
		}
	}
	cancel()
	<-done
	s, l := m.Stats()
	if s+l != 1000 || l < 900 || s == 0 {
		t.Fatalf("sent %d lost %d, want 1000 in all, most lost to overwriting", s, l)
	}
}
