package sshd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/gowrt/gowrt/mgmt/auth"
	"github.com/gowrt/gowrt/mgmt/shell"
)

// host is a shell.Host that records cfg calls.
type host struct {
	mu    sync.Mutex
	calls []string
}

func (h *host) Info() shell.Info {
	return shell.Info{Hostname: "gowrt", Uptime: 5 * time.Minute, MemTotal: 32 << 20, MemUsed: 8 << 20}
}
func (h *host) Interfaces() []shell.Iface { return nil }
func (h *host) Routes() []shell.Route {
	return []shell.Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), Gateway: netip.MustParseAddr("10.0.2.2"), Iface: "wan"}}
}
func (h *host) Ping(ctx context.Context, dst netip.Addr, seq uint16, size int) (time.Duration, error) {
	return time.Millisecond, nil
}
func (h *host) Resolve(ctx context.Context, name string) (netip.Addr, error) {
	return netip.Addr{}, errors.New("no DNS")
}
func (h *host) Conntrack() []shell.Conn                { return nil }
func (h *host) Leases() []shell.Lease                  { return nil }
func (h *host) Switch() (shell.SwitchInfo, bool)       { return shell.SwitchInfo{}, false }
func (h *host) Services(w io.Writer, a []string) error { return nil }
func (h *host) SetPassword(proof, pw string) error     { return errors.New("no") }
func (h *host) Reboot() error                          { return nil }
func (h *host) Logread(ctx context.Context, w io.Writer, args []string) error {
	fmt.Fprintln(w, "Dec  1 16:00:00 daemon.info sshd: hello from the log")
	return nil
}
func (h *host) Cfg(in io.Reader, w io.Writer, args []string) error {
	h.mu.Lock()
	h.calls = append(h.calls, strings.Join(args, " "))
	h.mu.Unlock()
	fmt.Fprintf(w, "cfg %s\n", args[0])
	return nil
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type fixture struct {
	srv     *Server
	addr    string
	host    *host
	key     ed25519.PrivateKey // authorized
	signer  ssh.Signer
	hostPub ssh.PublicKey
	log     *syncBuf
	limiter *auth.Limiter
}

func newSigner(t *testing.T) (ed25519.PrivateKey, ssh.Signer) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return priv, s
}

// startServer serves on loopback TCP; mod may change the config.
func startServer(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	pemBytes, err := GenerateHostKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{host: &host{}, log: &syncBuf{}, hostPub: hk.PublicKey()}
	f.key, f.signer = newSigner(t)
	authorized := string(ssh.MarshalAuthorizedKey(f.signer.PublicKey()))
	f.limiter = auth.NewLimiter(3, time.Minute, time.Minute)
	c := Config{
		HostKey: hk,
		AuthorizedKeys: func() []string {
			return []string{"garbage line", "# comment", "", strings.TrimSpace(authorized) + " admin@laptop"}
		},
		Limiter:     f.limiter,
		Shell:       shell.New(f.host),
		Log:         slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		MaxSessions: 2,
	}
	if mod != nil {
		mod(&c)
	}
	f.srv, err = New(c)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); f.srv.ServeConn(ctx, conn) }()
		}
	}()
	f.addr = ln.Addr().String()
	return f
}

// stats waits until the server's counters are want (a client may see
// its failure before the server has counted it).
func (f *fixture) stats(t *testing.T, want Stats) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); f.srv.Stats() != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want %+v\nlog:\n%s", f.srv.Stats(), want, f.log.String())
		}
	}
}

func (f *fixture) dial(user string, methods ...ssh.AuthMethod) (*ssh.Client, error) {
	return ssh.Dial("tcp", f.addr, &ssh.ClientConfig{
		User: user, Auth: methods, HostKeyCallback: ssh.FixedHostKey(f.hostPub), Timeout: 10 * time.Second,
	})
}

func (f *fixture) login(t *testing.T) *ssh.Client {
	t.Helper()
	c, err := f.dial("root", ssh.PublicKeys(f.signer))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// run execs line and returns its output and exit status.
func run(t *testing.T, c *ssh.Client, line string) (string, int) {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.CombinedOutput(line)
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitStatus()
	}
	t.Fatalf("%q: %v", line, err)
	return "", -1
}

func TestKeyLoginExec(t *testing.T) {
	f := startServer(t, nil)
	c := f.login(t)
	out, st := run(t, c, "routes; logread")
	if st != 0 || out != "default via 10.0.2.2 dev wan\nDec  1 16:00:00 daemon.info sshd: hello from the log\n" {
		t.Fatalf("%d %q", st, out)
	}
	out, st = run(t, c, "echo x; nosuch")
	if st != 127 || out != "x\nsh: nosuch: not found\n" {
		t.Fatalf("%d %q", st, out)
	}
	out, st = run(t, c, "exit 7")
	if st != 7 || out != "" {
		t.Fatalf("%d %q", st, out)
	}
	f.stats(t, Stats{Logins: 1})
	// The bad authorized_keys line was logged, with the service and source.
	logs := f.log.String()
	if !strings.Contains(logs, "bad authorized_keys line ignored") || !strings.Contains(logs, "line=1") ||
		!strings.Contains(logs, "msg=login service=sshd src=127.0.0.1 user=root method=publickey") {
		t.Fatalf("log:\n%s", logs)
	}
}

func TestCfgLinesInOrder(t *testing.T) {
	f := startServer(t, nil)
	out, st := run(t, f.login(t), "cfg set dhcp.lan.start=120; cfg commit")
	if st != 0 || out != "cfg set\ncfg commit\n" {
		t.Fatalf("%d %q", st, out)
	}
	f.host.mu.Lock()
	defer f.host.mu.Unlock()
	if !reflect.DeepEqual(f.host.calls, []string{"set dhcp.lan.start=120", "commit"}) {
		t.Fatalf("%q", f.host.calls)
	}
}

func TestWrongKeyAndUserRefused(t *testing.T) {
	f := startServer(t, func(c *Config) { c.Limiter = auth.NewLimiter(10, time.Minute, time.Minute) })
	_, other := newSigner(t)
	if _, err := f.dial("root", ssh.PublicKeys(other)); err == nil {
		t.Fatal("unauthorized key accepted")
	}
	if _, err := f.dial("admin", ssh.PublicKeys(f.signer)); err == nil {
		t.Fatal("user admin accepted")
	}
	f.stats(t, Stats{Failures: 2})
	logs := f.log.String()
	if !strings.Contains(logs, "level=WARN msg=\"authentication failed\" service=sshd src=127.0.0.1") || !strings.Contains(logs, "user=admin") {
		t.Fatalf("log:\n%s", logs)
	}
}

func TestPasswordOffByDefault(t *testing.T) {
	f := startServer(t, nil)
	if _, err := f.dial("root", ssh.Password("whatever1")); err == nil || !strings.Contains(err.Error(), "no supported methods remain") {
		t.Fatalf("password login without Password: %v", err)
	}
	f = startServer(t, func(c *Config) { c.Password = func(pw string) bool { return pw == "correct horse" } })
	if _, err := f.dial("root", ssh.Password("wrong horse")); err == nil {
		t.Fatal("wrong password accepted")
	}
	c, err := f.dial("root", ssh.Password("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if out, st := run(t, c, "echo in"); out != "in\n" || st != 0 {
		t.Fatalf("%d %q", st, out)
	}
	f.stats(t, Stats{Failures: 1, Logins: 1})
}

func TestLimiterRefuses(t *testing.T) {
	f := startServer(t, nil) // 3 failures a minute
	_, other := newSigner(t)
	for range 3 {
		if _, err := f.dial("root", ssh.PublicKeys(other)); err == nil {
			t.Fatal("wrong key accepted")
		}
	}
	f.stats(t, Stats{Failures: 3})
	// Now even the right key is refused.
	if _, err := f.dial("root", ssh.PublicKeys(f.signer)); err == nil {
		t.Fatal("locked-out source logged in")
	}
	f.stats(t, Stats{Failures: 3, Refused: 1})
	if ls := f.limiter.Stats(); ls.Failures != 3 || ls.Refused < 1 || ls.Sources != 1 {
		t.Fatalf("%+v", ls)
	}
	if !strings.Contains(f.log.String(), "connection refused: too many failed logins") {
		t.Fatal(f.log.String())
	}
}

func TestLimiterCountsPasswords(t *testing.T) {
	f := startServer(t, func(c *Config) { c.Password = func(pw string) bool { return pw == "correct horse" } })
	// One connection, several wrong passwords: each counts.
	_, err := f.dial("root", ssh.RetryableAuthMethod(ssh.Password("bad"), 5))
	if err == nil {
		t.Fatal("accepted")
	}
	f.stats(t, Stats{Failures: 3, Refused: 1})
	if _, err := f.dial("root", ssh.Password("correct horse")); err == nil {
		t.Fatal("locked-out source logged in with the right password")
	}
	// The 4th password of the first connection and the second connection are refused.
	f.stats(t, Stats{Failures: 3, Refused: 2})
}

func TestInteractivePty(t *testing.T) {
	f := startServer(t, nil)
	c := f.login(t)
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Setenv("LANG", "C"); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	in, _ := s.StdinPipe()
	out := &syncBuf{}
	s.Stdout = out
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	s.WindowChange(40, 100)
	io.WriteString(in, "echo hi\r")
	waitOut(t, out, "# echo hi\r\nhi\r\n# ")
	io.WriteString(in, "exit\r")
	if err := s.Wait(); err != nil { // exit-status 0
		t.Fatal(err)
	}
}

func TestExecPtyInterrupt(t *testing.T) {
	f := startServer(t, nil)
	s, err := f.login(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.RequestPty("vt100", 24, 80, nil); err != nil {
		t.Fatal(err)
	}
	in, _ := s.StdinPipe()
	out := &syncBuf{}
	s.Stdout = out
	if err := s.Start("ping -i 0.2 10.9.9.9; echo not reached"); err != nil {
		t.Fatal(err)
	}
	waitOut(t, out, "icmp_seq=2 time=1.00 ms\r\n")
	in.Write([]byte{3}) // ^C
	var ee *ssh.ExitError
	if err := s.Wait(); !errors.As(err, &ee) || ee.ExitStatus() != shell.StatusInterrupted {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(out.String(), "--- 10.9.9.9 ping statistics ---\r\n") || strings.Contains(out.String(), "not reached") {
		t.Fatalf("%q", out.String())
	}
}

func waitOut(t *testing.T, b *syncBuf, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(b.String(), want); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("output lacks %q: %q", want, b.String())
		}
	}
}

func TestShellWithoutPty(t *testing.T) {
	f := startServer(t, nil)
	s, err := f.login(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	s.Stdin = strings.NewReader("echo one\necho two\n")
	var out bytes.Buffer
	s.Stdout = &out
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil || out.String() != "one\ntwo\n" {
		t.Fatalf("%v %q", err, out.String())
	}
}

func TestForwardingAndSubsystemRefused(t *testing.T) {
	f := startServer(t, nil)
	c := f.login(t)
	if conn, err := c.Dial("tcp", "127.0.0.1:22"); err == nil {
		conn.Close()
		t.Fatal("direct-tcpip accepted")
	}
	if _, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		t.Fatal("tcpip-forward accepted")
	}
	s, _ := c.NewSession()
	if err := s.RequestSubsystem("sftp"); err == nil {
		t.Fatal("sftp accepted")
	}
	s.Close()
}

func TestMaxSessions(t *testing.T) {
	f := startServer(t, nil) // MaxSessions 2
	c := f.login(t)
	var open []*ssh.Session
	for range 2 {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, s)
	}
	if _, err := c.NewSession(); err == nil || !strings.Contains(err.Error(), "too many sessions") {
		t.Fatalf("third session: %v", err)
	}
	open[0].Close()
	// The slot frees once the server has seen the close.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		s, err := c.NewSession()
		if err == nil {
			s.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
}

func TestHandshakeTimeout(t *testing.T) {
	f := startServer(t, func(c *Config) { c.HandshakeTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn) // the server's version line, then close
	if err != nil || time.Since(start) > 3*time.Second {
		t.Fatalf("stalled client held the connection: %v after %v", err, time.Since(start))
	}
}

func TestGenerateHostKey(t *testing.T) {
	p, err := GenerateHostKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(p, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n")) {
		t.Fatalf("%s", p)
	}
	k, err := ssh.ParsePrivateKey(p)
	if err != nil || k.PublicKey().Type() != ssh.KeyAlgoED25519 {
		t.Fatalf("%v", err)
	}
	q, _ := GenerateHostKey(rand.Reader)
	if bytes.Equal(p, q) {
		t.Fatal("same key twice")
	}
}

// TestOpenSSHClient runs Debian's OpenSSH client against the server.
func TestOpenSSHClient(t *testing.T) {
	f := startServer(t, nil)
	dir := t.TempDir()
	blk, err := ssh.MarshalPrivateKey(f.key, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pemEncode(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(f.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sshArgs := func(extra ...string) []string {
		return append([]string{"-F", "/dev/null", "-i", keyFile, "-p", port,
			"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
			"-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR"}, extra...)
	}
	cmd := exec.CommandContext(ctx, "ssh", sshArgs("root@127.0.0.1", "cfg set dhcp.lan.start=120; cfg commit; routes")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ssh: %v\n%s\nserver log:\n%s", err, out, f.log.String())
	}
	if string(out) != "cfg set\ncfg commit\ndefault via 10.0.2.2 dev wan\n" {
		t.Fatalf("%q", out)
	}
	// The exit status travels back.
	cmd = exec.CommandContext(ctx, "ssh", sshArgs("root@127.0.0.1", "nosuch")...)
	out, err = cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 || !strings.Contains(string(out), "sh: nosuch: not found") {
		t.Fatalf("%v %q", err, out)
	}
	// A key not in authorized_keys is refused.
	other, _ := newSigner(t)
	blk, _ = ssh.MarshalPrivateKey(other, "")
	os.WriteFile(keyFile, pemEncode(blk), 0o600)
	cmd = exec.CommandContext(ctx, "ssh", sshArgs("root@127.0.0.1", "echo no")...)
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 255 || !strings.Contains(string(out), "Permission denied") {
		t.Fatalf("%v %q", err, out)
	}
	t.Logf("OpenSSH client: %s", strconv.Quote(strings.TrimSpace(string(out))))
}
