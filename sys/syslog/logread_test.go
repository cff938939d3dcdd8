package syslog

import (
	"bytes"
	"context"
	"github.com/gowrt/gowrt/internal/testutil"
	"strings"
	"testing"
	"time"
)

func logreadRing() *Ring {
	r := NewRing(1 << 16)
	at := func(s int) time.Time { return time.Date(2026, 12, 1, 16, 31, s, 0, time.Local) }
	r.Add(Record{Time: at(1), Facility: Kern, Severity: Info, Service: "kernel", Msg: "[    1.000000] eth0: link up"})
	r.Add(Record{Time: at(2), Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "DHCPACK 192.168.1.100"})
	r.Add(Record{Time: at(3), Facility: Daemon, Severity: Err, Service: "dhcpd", Msg: "no address available"})
	r.Add(Record{Time: at(4), Facility: Auth, Severity: Notice, Service: "sshd", Msg: "accepted key for root"})
	r.Add(Record{Time: at(5), Facility: Daemon, Severity: Warning, Service: "ntpd", Msg: "no server reachable"})
	r.Add(Record{Time: at(6), Facility: User, Severity: Emerg, Service: "", Msg: "no service"})
	return r
}

func TestLogread(t *testing.T) {
	r := logreadRing()
	lines := []string{
		"Tue Dec  1 16:31:01 2026 kern.info kernel: [    1.000000] eth0: link up",
		"Tue Dec  1 16:31:02 2026 daemon.info dhcpd: DHCPACK 192.168.1.100",
		"Tue Dec  1 16:31:03 2026 daemon.err dhcpd: no address available",
		"Tue Dec  1 16:31:04 2026 auth.notice sshd: accepted key for root",
		"Tue Dec  1 16:31:05 2026 daemon.warn ntpd: no server reachable",
		"Tue Dec  1 16:31:06 2026 user.emerg no service",
	}
	for _, c := range []struct {
		args []string
		want []int
	}{
		{nil, []int{0, 1, 2, 3, 4, 5}},
		{[]string{"-l", "2"}, []int{4, 5}},
		{[]string{"-l", "0"}, []int{0, 1, 2, 3, 4, 5}},
		{[]string{"-e", "address"}, []int{2}},
		{[]string{"-e", "dhcp"}, []int{1, 2}},
		{[]string{"-p", "warn"}, []int{2, 4, 5}},
		{[]string{"-p", "warning"}, []int{2, 4, 5}},
		{[]string{"-p", "4"}, []int{2, 4, 5}},
		{[]string{"-p", "err"}, []int{2, 5}},
		{[]string{"-p", "emerg"}, []int{5}},
		{[]string{"-p", "0"}, []int{5}},
		{[]string{"-p", "debug"}, []int{0, 1, 2, 3, 4, 5}},
		{[]string{"-s", "dhcpd"}, []int{1, 2}},
		{[]string{"-s", "dhcpd", "-p", "err", "-l", "5"}, []int{2}},
		{[]string{"-s", "nobody"}, nil},
	} {
		var out bytes.Buffer
		if err := r.Logread(t.Context(), &out, c.args); err != nil {
			t.Errorf("logread %q: %v", c.args, err)
			continue
		}
		var want string
		for _, i := range c.want {
			want += lines[i] + "\n"
		}
		if out.String() != want {
			t.Errorf("logread %q printed\n%s\nwant\n%s", c.args, out.String(), want)
		}
	}
}

func TestLogreadBadArgs(t *testing.T) {
	r := logreadRing()
	for _, args := range [][]string{{"-x"}, {"-l"}, {"-l", "many"}, {"-l", "-1"}, {"-p", "loud"}, {"-p", "8"}, {"extra"}, {"-h"}} {
		var out bytes.Buffer
		err := r.Logread(t.Context(), &out, args)
		if err == nil || !strings.Contains(err.Error(), "usage: logread") {
			t.Errorf("logread %q: error %v, want one with the usage", args, err)
		}
		if out.Len() != 0 {
			t.Errorf("logread %q printed %q", args, out.String())
		}
	}
}

func TestLogreadFollow(t *testing.T) {
	r := logreadRing()
	ctx, cancel := context.WithCancel(t.Context())
	var out testutil.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- r.Logread(ctx, &out, []string{"-f", "-l", "1", "-s", "dhcpd"}) }()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for out.String() != want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if out.String() != want {
			t.Fatalf("logread -f printed\n%s\nwant\n%s", out.String(), want)
		}
	}
	backlog := "Tue Dec  1 16:31:03 2026 daemon.err dhcpd: no address available\n"
	waitFor(backlog)
	r.Add(Record{Time: time.Date(2026, 12, 1, 16, 32, 0, 0, time.Local), Facility: Daemon, Severity: Info, Service: "dhcpd", Msg: "DHCPRELEASE"})
	r.Add(Record{Facility: Daemon, Severity: Info, Service: "other", Msg: "not shown"})
	waitFor(backlog + "Tue Dec  1 16:32:00 2026 daemon.info dhcpd: DHCPRELEASE\n")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("logread -f returned %v after cancel, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("logread -f did not return after cancel")
	}
}
