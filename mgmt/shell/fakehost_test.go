package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// fakeHost records what the shell asks of it.
type fakeHost struct {
	mu        sync.Mutex
	cfgCalls  []string // args joined by " ", with the input read for import
	pings     []uint16
	pingLost  map[uint16]bool
	pingBlock bool // Ping waits for ctx
	pingSize  int
	rebooted  bool
	proof, pw string
	resetPW   string
	noSwitch  bool
	panicOn   string
}

type resettingHost struct{ *fakeHost }

func (r resettingHost) ResetPassword(pw string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resetPW = pw
	return nil
}

func (f *fakeHost) Info() Info {
	return Info{Board: "malta", Version: "v1.2", Hostname: "gowrt", Uptime: 2*24*time.Hour + 3*time.Hour + 4*time.Minute,
		MemTotal: 32 << 20, MemUsed: 12 << 20, Busy: 0.25}
}

func (f *fakeHost) Interfaces() []Iface {
	return []Iface{
		{Name: "lan", MAC: "52:54:00:12:34:56", Up: true, MTU: 1500, SpeedMbps: 1000,
			Addrs:     []netip.Prefix{netip.MustParsePrefix("192.168.1.1/24"), netip.MustParsePrefix("fe80::1/64")},
			RxPackets: 10, TxPackets: 20, RxBytes: 1536, TxBytes: 3 << 20, Drops: 7},
		{Name: "wan", MAC: "52:54:00:ab:cd:ef", MTU: 1500,
			Addrs: []netip.Prefix{netip.MustParsePrefix("10.0.2.15/20")}},
	}
}

func (f *fakeHost) Routes() []Route {
	return []Route{
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("10.0.2.2"), Iface: "wan"},
		{Dst: netip.MustParsePrefix("192.168.1.0/24"), Iface: "lan"},
		{Dst: netip.MustParsePrefix("10.0.0.0/20"), Iface: "wan"},
	}
}

var errTimeout = context.DeadlineExceeded

func (f *fakeHost) Ping(ctx context.Context, dst netip.Addr, seq uint16, size int) (time.Duration, error) {
	f.mu.Lock()
	f.pings = append(f.pings, seq)
	f.pingSize = size
	lost, block := f.pingLost[seq], f.pingBlock
	f.mu.Unlock()
	if f.panicOn == "ping" {
		panic("ping exploded")
	}
	if block || lost {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return time.Duration(seq) * time.Millisecond, nil
}

func (f *fakeHost) Resolve(ctx context.Context, name string) (netip.Addr, error) {
	if name == "example.org" {
		return netip.MustParseAddr("93.184.216.34"), nil
	}
	return netip.Addr{}, errors.New("Name or service not known")
}

func (f *fakeHost) Conntrack() []Conn {
	return []Conn{
		{Proto: "tcp", Src: netip.MustParseAddrPort("192.168.1.100:40000"), Dst: netip.MustParseAddrPort("1.1.1.1:443"),
			NATSrc: netip.MustParseAddrPort("10.0.2.15:61000"), State: "ESTABLISHED", Timeout: 431999 * time.Second},
		{Proto: "udp", Src: netip.MustParseAddrPort("192.168.1.100:5353"), Dst: netip.MustParseAddrPort("192.168.1.1:53"), Timeout: 30 * time.Second},
	}
}

func (f *fakeHost) Leases() []Lease {
	return []Lease{
		{MAC: "AA:BB:CC:DD:EE:01", Hostname: "laptop", Addr: netip.MustParseAddr("192.168.1.100"), Expires: time.Unix(1700000000, 0)},
		{MAC: "aa:bb:cc:dd:ee:02", Addr: netip.MustParseAddr("192.168.1.5")},
	}
}

func (f *fakeHost) Switch() (SwitchInfo, bool) {
	if f.noSwitch {
		return SwitchInfo{}, false
	}
	return SwitchInfo{Model: "AR8316",
		Ports: []SwitchPort{{Port: 0, Name: "cpu", Link: true, SpeedMbps: 1000}, {Port: 1, Name: "lan1"}},
		VLANs: []SwitchVLAN{{ID: 1, Ports: "0t 1 2 3 4"}, {ID: 2, Ports: "0t 5"}},
		ATU:   []ATUEntry{{MAC: "AA:BB:CC:DD:EE:01", Port: 1, VLAN: 1}},
	}, true
}

func (f *fakeHost) Logread(ctx context.Context, w io.Writer, args []string) error {
	fmt.Fprintf(w, "logread %q\n", args)
	return nil
}

func (f *fakeHost) Cfg(in io.Reader, w io.Writer, args []string) error {
	call := strings.Join(args, " ")
	if len(args) == 1 && args[0] == "import" {
		b, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		call += " <" + string(b)
	}
	f.mu.Lock()
	f.cfgCalls = append(f.cfgCalls, call)
	f.mu.Unlock()
	if len(args) > 0 && args[0] == "bad" {
		return errors.New("unknown subcommand bad")
	}
	if len(args) > 0 && args[0] == "panic" {
		var m map[string]int
		m["x"] = 1 // nil map write: a runtime panic
	}
	fmt.Fprintf(w, "cfg ok\n")
	return nil
}

func (f *fakeHost) Services(w io.Writer, args []string) error {
	fmt.Fprintf(w, "services %q\n", args)
	return nil
}

func (f *fakeHost) SetPassword(proof, pw string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if proof != "old-password" {
		return errors.New("wrong current password or setup token")
	}
	f.proof, f.pw = proof, pw
	return nil
}

func (f *fakeHost) Reboot() error {
	f.rebooted = true
	return nil
}

func (f *fakeHost) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cfgCalls...)
}

// run runs line on a fresh shell over h and returns status and output.
func run(h Host, line string, in string) (int, string) {
	var out bytes.Buffer
	s := &Session{In: strings.NewReader(in), Out: &out, User: "root"}
	st := New(h).Exec(context.Background(), s, line)
	return st, out.String()
}
