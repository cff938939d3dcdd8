package shell

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestExec(t *testing.T) {
	for _, tc := range []struct {
		line   string
		status int
		out    string
	}{
		{"", 0, ""},
		{"echo hello world", 0, "hello world\n"},
		{"echo a; echo 'b c'", 0, "a\nb c\n"},
		{"nosuch", 127, "sh: nosuch: not found\n"},
		{"nosuch; echo after", 0, "sh: nosuch: not found\nafter\n"},
		{"echo before; nosuch", 127, "before\nsh: nosuch: not found\n"},
		{"cfg bad", 1, "cfg: unknown subcommand bad\n"},
		{"echo 'x", 2, "sh: unterminated quoted string\n"},
		{"exit 3; echo not reached", 3, ""},
		{"exit", 0, ""},
		{"exit x", 1, "exit: x: numeric argument 0-255 required\n"},
		{"ip", 1, "usage: ip route [show]\n"},
		{"echo a # echo b", 0, "a\n"},
	} {
		st, out := run(&fakeHost{}, tc.line, "")
		if st != tc.status || out != tc.out {
			t.Errorf("Exec(%q) = %d %q; want %d %q", tc.line, st, out, tc.status, tc.out)
		}
	}
}

func TestExecPanicRecovered(t *testing.T) {
	st, out := run(&fakeHost{}, "cfg panic; echo still here", "")
	if st != 0 || !strings.HasPrefix(out, "cfg: panic: assignment to entry in nil map\nstill here\n") {
		t.Fatalf("%d %q", st, out)
	}
	sh := New(&fakeHost{})
	sh.Add(Command{Name: "boom", Run: func(context.Context, *Session, []string) error { panic(errors.New("kaboom")) }})
	var out2 bytes.Buffer
	if st := sh.Exec(context.Background(), &Session{Out: &out2}, "boom"); st != 1 || out2.String() != "boom: panic: kaboom\n" {
		t.Fatalf("%d %q", st, out2.String())
	}
}

func TestExecCfgLinesInOrder(t *testing.T) {
	h := &fakeHost{}
	st, out := run(h, "cfg set dhcp.lan.start=120; cfg commit", "")
	if st != 0 || out != "cfg ok\ncfg ok\n" {
		t.Fatalf("%d %q", st, out)
	}
	if got := h.calls(); !reflect.DeepEqual(got, []string{"set dhcp.lan.start=120", "commit"}) {
		t.Fatalf("calls %q", got)
	}
	// import reads the session's input.
	st, _ = run(h, "cfg import", "package system\n")
	if got := h.calls(); st != 0 || got[2] != "import <package system\n" {
		t.Fatalf("%d %q", st, got)
	}
}

func TestExecStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if st := New(&fakeHost{}).Exec(ctx, &Session{Out: &out}, "echo a"); st != StatusInterrupted || out.Len() != 0 {
		t.Fatalf("%d %q", st, out.String())
	}
}

func TestCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string // each must appear, in order
	}{
		{"help", []string{"  cfg ", "  ifconfig ", "  ping ", "  top "}},
		{"help ping", []string{"usage: ping [-c COUNT]"}},
		{"ifconfig", []string{
			"lan       Link encap:Ethernet  HWaddr 52:54:00:12:34:56  Speed:1000Mb/s\n",
			"          inet addr:192.168.1.1  Bcast:192.168.1.255  Mask:255.255.255.0\n",
			"          inet6 addr: fe80::1/64 Scope:Link\n",
			"          UP BROADCAST RUNNING MULTICAST  MTU:1500  Metric:1\n",
			"          RX packets:10 errors:0 dropped:7 overruns:0 frame:0\n",
			"          TX packets:20 errors:0 dropped:0 overruns:0 carrier:0\n",
			"          RX bytes:1536 (1.5 KiB)  TX bytes:3145728 (3.0 MiB)\n",
			"wan       Link encap:Ethernet  HWaddr 52:54:00:AB:CD:EF\n",
			"          inet addr:10.0.2.15  Bcast:10.0.15.255  Mask:255.255.240.0\n",
			"          BROADCAST MULTICAST  MTU:1500  Metric:1\n"}},
		{"ifconfig wan", []string{"wan       Link"}},
		{"routes", []string{"default via 10.0.2.2 dev wan\n192.168.1.0/24 dev lan\n10.0.0.0/20 dev wan\n"}},
		{"ip route", []string{"default via 10.0.2.2 dev wan\n192.168.1.0/24 dev lan\n"}},
		{"ip r s", []string{"default via 10.0.2.2 dev wan\n"}},
		{"leases", []string{"1700000000 aa:bb:cc:dd:ee:01 192.168.1.100 laptop *\n0 aa:bb:cc:dd:ee:02 192.168.1.5 * *\n"}},
		{"conntrack", []string{
			"tcp      6 431999 ESTABLISHED src=192.168.1.100 dst=1.1.1.1 sport=40000 dport=443 src=1.1.1.1 dst=10.0.2.15 sport=443 dport=61000\n",
			"udp      17 30 src=192.168.1.100 dst=192.168.1.1 sport=5353 dport=53 src=192.168.1.1 dst=192.168.1.100 sport=53 dport=5353\n",
			"conntrack: 2 flow entries have been shown.\n"}},
		{"etherswitch", []string{"etherswitch0: AR8316, 2 ports, 2 VLAN groups\n",
			"port0: (cpu)\n\tmedia: Ethernet 1000baseT <full-duplex>\n\tstatus: active\n",
			"port1: (lan1)\n\tmedia: Ethernet autoselect\n\tstatus: no carrier\n",
			"vlangroup0:\n\tvlan: 1\n\tmembers 0t 1 2 3 4\n", "vlangroup1:\n\tvlan: 2\n\tmembers 0t 5\n",
			"atu:\n\taa:bb:cc:dd:ee:01 port1 vlan 1\n"}},
		{"logread -l 5 -s sshd", []string{`logread ["-l" "5" "-s" "sshd"]`}},
		{"services restart dhcp", []string{`services ["restart" "dhcp"]`}},
		{"uptime", []string{" up 2 days,  3:04,  busy: 25%\n"}},
		{"free", []string{"total", "used", "free", "available", "\n", "Mem:", "32768", "12288", "20480", "Swap:"}},
		{"top", []string{"gowrt malta v1.2, up 2 days,  3:04\n", "Mem: 12288K used, 20480K free, 32768K total\n",
			"CPU: 25% busy, 75% idle\n", "Heap: ", "K in use, ", "K idle, ", "K released", "goroutines ", "GC:   ", " cycles, last pause "}},
		{"reboot", []string{"The system is going down NOW!\n"}},
	} {
		h := &fakeHost{}
		st, out := run(h, tc.line, "")
		if st != 0 {
			t.Errorf("%q: status %d, output %q", tc.line, st, out)
			continue
		}
		rest := out
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%q: output lacks %q (in order):\n%s", tc.line, w, out)
				break
			}
			rest = rest[i+len(w):]
		}
		if tc.line == "reboot" && !h.rebooted {
			t.Error("reboot did not reach the host")
		}
	}
}

func TestCommandErrors(t *testing.T) {
	for _, tc := range []struct{ line, out string }{
		{"ifconfig eth9", "ifconfig: eth9: error fetching interface information: Device not found\n"},
		{"ping", "usage: ping [-c COUNT] [-s SIZE] [-W SECONDS] [-i SECONDS] HOST\n"},
		{"ping -s 70000 1.2.3.4", "ping: invalid packet size: 70000 (0-65507)\n"},
		{"ping -i 0.01 1.2.3.4", "ping: invalid interval: 0.01 (at least 200ms)\n"},
		{"ping -x 1.2.3.4", "ping: flag provided but not defined: -x\nusage: ping"},
		{"ping nosuch.example", "ping: nosuch.example: Name or service not known\n"},
		{"help nosuch", "help: no such command: nosuch\n"},
	} {
		st, out := run(&fakeHost{}, tc.line, "")
		if st != 1 || !strings.HasPrefix(out, tc.out) {
			t.Errorf("%q: %d %q, want 1 %q", tc.line, st, out, tc.out)
		}
	}
	st, out := run(&fakeHost{noSwitch: true}, "etherswitch", "")
	if st != 1 || out != "etherswitch: no switch on this board\n" {
		t.Errorf("%d %q", st, out)
	}
}

func TestUptimeFormat(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{5 * time.Minute, "up 5 min"},
		{time.Hour + 2*time.Minute, "up  1:02"},
		{24*time.Hour + 30*time.Minute, "up 1 day, 30 min"},
		{3*24*time.Hour + 13*time.Hour + 9*time.Minute, "up 3 days, 13:09"},
	} {
		if got := uptimeString(tc.d); got != tc.want {
			t.Errorf("%v: %q want %q", tc.d, got, tc.want)
		}
	}
}

func TestPing(t *testing.T) {
	h := &fakeHost{pingLost: map[uint16]bool{2: true}}
	st, out := run(h, "ping -c 3 -i 0.2 -W 0.05 -s 100 example.org", "")
	want := []string{
		"PING example.org (93.184.216.34) 100(128) bytes of data.\n",
		"108 bytes from 93.184.216.34: icmp_seq=1 time=1.00 ms\n",
		"108 bytes from 93.184.216.34: icmp_seq=3 time=3.00 ms\n",
		"\n--- example.org ping statistics ---\n",
		"3 packets transmitted, 2 received, 33% packet loss, time ",
		"rtt min/avg/max/mdev = 1.000/2.000/3.000/1.000 ms\n",
	}
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("status %d, output lacks %q:\n%s", st, w, out)
		}
		rest = rest[i+len(w):]
	}
	if st != 0 || strings.Contains(out, "icmp_seq=2") || h.pingSize != 100 || !reflect.DeepEqual(h.pings, []uint16{1, 2, 3}) {
		t.Fatalf("status %d pings %v size %d\n%s", st, h.pings, h.pingSize, out)
	}
	// All lost: status 1, no rtt line.
	st, out = run(&fakeHost{pingBlock: true}, "ping -c 2 -i 0.2 -W 0.01 ::1", "")
	if st != 1 || !strings.Contains(out, "PING ::1 (::1) 56(104) bytes") || !strings.Contains(out, "2 packets transmitted, 0 received, 100% packet loss") || strings.Contains(out, "rtt") {
		t.Fatalf("%d %q", st, out)
	}
}

func TestPingStopsOnCancel(t *testing.T) {
	h := &fakeHost{}
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	start := time.Now()
	st := New(h).Exec(ctx, &Session{Out: &out}, "ping -i 0.2 10.0.0.1") // no -c: until cancelled
	if time.Since(start) > 3*time.Second || st != 0 || !strings.Contains(out.String(), "--- 10.0.0.1 ping statistics ---") {
		t.Fatalf("%d after %v: %q", st, time.Since(start), out.String())
	}
	if n := len(h.pings); n < 2 || n > 6 {
		t.Fatalf("%d pings in 0.7 s at 0.2 s", n)
	}
}

func TestPasswd(t *testing.T) {
	// Over SSH (not the console): current password first.
	h := &fakeHost{}
	st, out := run(h, "passwd", "old-password\nnew-password\r\nnew-password\n")
	if st != 0 || h.pw != "new-password" || !strings.HasSuffix(out, "passwd: password for root changed\n") || !strings.Contains(out, "Current password") {
		t.Fatalf("%d %q %q", st, out, h.pw)
	}
	st, out = run(&fakeHost{}, "passwd", "old-password\nnew-password\nother-password\n")
	if st != 1 || !strings.HasSuffix(out, "passwd: passwords don't match\n") {
		t.Fatalf("%d %q", st, out)
	}
	st, out = run(&fakeHost{}, "passwd", "wrong\nnew-password\nnew-password\n")
	if st != 1 || !strings.HasSuffix(out, "passwd: wrong current password or setup token\n") {
		t.Fatalf("%d %q", st, out)
	}
	st, _ = run(&fakeHost{}, "passwd", "old-password\nnew-pa")
	if st != 1 {
		t.Fatalf("EOF: %d", st)
	}
	// On the console with a host that can reset: no proof.
	rh := resettingHost{&fakeHost{}}
	var o bytes.Buffer
	s := &Session{In: strings.NewReader("console-pw\nconsole-pw\n"), Out: &o, Console: true, User: "root"}
	if st := New(rh).Exec(context.Background(), s, "passwd"); st != 0 || rh.resetPW != "console-pw" || strings.Contains(o.String(), "Current") {
		t.Fatalf("%d %q %q", st, o.String(), rh.resetPW)
	}
}

func FuzzExec(f *testing.F) {
	for _, s := range []string{"help", "ifconfig lan; routes", "ping -c 1 -i 0.2 -W 0.01 1.2.3.4", "cfg set a=b; cfg commit",
		"passwd", "exit 3", "ip r", "etherswitch; conntrack; leases; free; uptime; top", "'unterminated", "ping -c -1 x", "logread -f"} {
		f.Add(s, "old-password\nx\n")
	}
	sh := New(&fakeHost{})
	f.Fuzz(func(t *testing.T, line, in string) {
		if strings.Contains(line, "reboot") {
			return
		}
		// ping without -c runs until cancelled: bound every line in time.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var out bytes.Buffer
		st := sh.Exec(ctx, &Session{In: strings.NewReader(in), Out: &out, User: "root"}, line)
		if st < 0 || st > 255 {
			t.Fatalf("status %d", st)
		}
		if strings.Contains(out.String(), ": panic: ") && !strings.Contains(line, "panic") {
			t.Fatalf("%q panicked: %s", line, out.String())
		}
	})
}
