package shell

import (
	"bytes"
	"context"
	"github.com/gowrt/gowrt/internal/testutil"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitFor polls out until it contains want.
func waitFor(t *testing.T, out *testutil.SyncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output lacks %q:\n%q", want, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type fakeTerminal struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *testutil.SyncBuffer
	done chan error
	h    *fakeHost
}

func startTerminal(t *testing.T, h Host, s *Session) *fakeTerminal {
	pr, pw := io.Pipe()
	out := &testutil.SyncBuffer{}
	s.In, s.Out = pr, out
	ft := &fakeTerminal{t: t, in: pw, out: out, done: make(chan error, 1)}
	go func() { ft.done <- New(h).Interactive(context.Background(), s, "# ") }()
	t.Cleanup(func() { pw.Close() })
	return ft
}

func (ft *fakeTerminal) send(s string) {
	if _, err := ft.in.Write([]byte(s)); err != nil {
		ft.t.Fatal(err)
	}
}

func (ft *fakeTerminal) wait() error {
	select {
	case err := <-ft.done:
		return err
	case <-time.After(10 * time.Second):
		ft.t.Fatal("Interactive did not return")
		return nil
	}
}

func TestInteractiveLineEditing(t *testing.T) {
	ft := startTerminal(t, &fakeHost{}, &Session{User: "root", Console: true})
	waitFor(t, ft.out, "# ")
	ft.send("echo hi\r")
	waitFor(t, ft.out, "# echo hi\r\nhi\r\n# ")
	ft.send("echoo\x7f x\r") // DEL
	waitFor(t, ft.out, "echoo\b \b x\r\nx\r\n# ")
	ft.send("ech\bho hh\x08\x08y\r\n") // ^H, CR LF counts once
	waitFor(t, ft.out, "\r\ny\r\n# ")
	ft.send("garbage\x15echo u\r") // ^U
	waitFor(t, ft.out, "garbage\b \b\b \b\b \b\b \b\b \b\b \b\b \becho u\r\nu\r\n# ")
	ft.send("nosuch\x03") // ^C drops the line
	waitFor(t, ft.out, "nosuch^C\r\n# ")
	ft.send("\x1b[A\x1bOBecho arrows\r") // arrow keys are swallowed
	waitFor(t, ft.out, "# echo arrows\r\narrows\r\n# ")
	ft.send("nosuch\r")
	waitFor(t, ft.out, "sh: nosuch: not found\r\n# ")
	ft.send("é\x7fecho ok\x04\r") // ^D inside a line is ignored; DEL removes a whole rune
	waitFor(t, ft.out, "\r\nok\r\n# ")
	ft.send("\x04") // ^D on an empty line: exit
	if err := ft.wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(ft.out.String(), "# exit\r\n") {
		t.Fatalf("%q", ft.out.String())
	}
	if strings.Contains(ft.out.String(), "nosuch: not found\r\n# nosuch") {
		t.Fatal("the ^C line ran")
	}
}

func TestInteractiveExitCommandAndLongLine(t *testing.T) {
	ft := startTerminal(t, &fakeHost{}, &Session{User: "root"})
	ft.send(strings.Repeat("x", MaxLine+10) + "\r")
	waitFor(t, ft.out, "\a")
	waitFor(t, ft.out, "sh: "+strings.Repeat("x", MaxLine)+": not found\r\n")
	ft.send("exit\r")
	if err := ft.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestInteractiveInterruptsCommand(t *testing.T) {
	h := &fakeHost{}
	ft := startTerminal(t, h, &Session{User: "root"})
	ft.send("ping -i 0.2 10.1.1.1\r")
	waitFor(t, ft.out, "icmp_seq=2 ")
	ft.send("\x03")
	waitFor(t, ft.out, "--- 10.1.1.1 ping statistics ---\r\n")
	waitFor(t, ft.out, "ms\r\n# ")
	ft.send("echo after\r")
	waitFor(t, ft.out, "after\r\n# ")
	ft.in.Close() // end of input: leave
	if err := ft.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestInteractivePasswdNoEcho(t *testing.T) {
	h := &fakeHost{}
	ft := startTerminal(t, h, &Session{User: "root"})
	ft.send("passwd\r")
	waitFor(t, ft.out, "Current password (or setup token): ")
	ft.send("old-password\r")
	waitFor(t, ft.out, "New password: ")
	ft.send("secret-pw1\r")
	waitFor(t, ft.out, "Retype password: ")
	ft.send("secret-pw1\r")
	waitFor(t, ft.out, "passwd: password for root changed\r\n# ")
	if strings.Contains(ft.out.String(), "secret") || strings.Contains(ft.out.String(), "old-password") || h.pw != "secret-pw1" {
		t.Fatalf("%q %q", ft.out.String(), h.pw)
	}
	// cfg import reads cooked lines until ^D.
	ft.send("cfg import\r")
	ft.send("package system\r")
	ft.send("\x04")
	waitFor(t, ft.out, "cfg ok\r\n# ")
	if c := h.calls(); len(c) != 1 || c[0] != "import <package system\n" {
		t.Fatalf("%q", c)
	}
	ft.send("exit\r")
	ft.wait()
}

func TestInteractivePlain(t *testing.T) {
	var out bytes.Buffer
	s := &Session{In: strings.NewReader("echo a\necho b\r\nnosuch\necho last"), Out: &out, Plain: true, User: "root"}
	if err := New(&fakeHost{}).Interactive(context.Background(), s, "# "); err != nil {
		t.Fatal(err)
	}
	if want := "a\nb\nsh: nosuch: not found\nlast\n"; out.String() != want {
		t.Fatalf("%q want %q", out.String(), want)
	}
}

func TestInteractiveContextCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- New(&fakeHost{}).Interactive(ctx, &Session{In: pr, Out: io.Discard}, "# ")
	}()
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Interactive ignored ctx")
	}
}

func TestCRLFWriter(t *testing.T) {
	var b bytes.Buffer
	w := NewCRLFWriter(&b)
	n, err := w.Write([]byte("a\nbc\n\nd"))
	if n != 7 || err != nil || b.String() != "a\r\nbc\r\n\r\nd" {
		t.Fatalf("%d %v %q", n, err, b.String())
	}
}

func TestExecTerminal(t *testing.T) {
	h := &fakeHost{}
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &testutil.SyncBuffer{}
	s := &Session{In: pr, Out: out, User: "root"}
	done := make(chan int, 1)
	go func() { done <- New(h).ExecTerminal(context.Background(), s, "ping -i 0.2 10.2.2.2; echo next") }()
	waitFor(t, out, "icmp_seq=1 time=1.00 ms\r\n")
	pw.Write([]byte{keyIntr})
	select {
	case st := <-done:
		// ^C cancelled the whole line: echo did not run.
		if st != StatusInterrupted || !strings.Contains(out.String(), "--- 10.2.2.2 ping statistics ---\r\n") || strings.Contains(out.String(), "next") {
			t.Fatalf("%d %q", st, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("^C did not stop ping")
	}
	s.Close()
	s.Close() // twice is fine
}

func TestSessionCloseStopsPump(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	s := &Session{In: pr, Out: io.Discard, Plain: true}
	done := make(chan error, 1)
	go func() { done <- New(&fakeHost{}).Interactive(context.Background(), s, "") }()
	pw.Write([]byte("exit\n"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Input after exit fills the pump's queue and blocks it on a send.
	go func() {
		for range 10 {
			if _, err := pw.Write([]byte("more input\n")); err != nil {
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	before := runtime.NumGoroutine()
	s.Close()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() >= before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Close did not end the blocked input goroutine")
		}
	}
}

// FuzzInteractive feeds random terminal input (control keys, escape
// sequences, broken UTF-8) through the line editor and the commands.
func FuzzInteractive(f *testing.F) {
	for _, s := range []string{"echo hi\r", "ab\x7f\x7f\x15\x03\x1b[A\x1bOB\x04", "passwd\rold-password\rx\rx\r", "\x1b[", "\xff\xfe\x7f\r", "cfg import\ra\r\x04exit\r"} {
		f.Add(s, false)
	}
	sh := New(&fakeHost{})
	f.Fuzz(func(t *testing.T, input string, plain bool) {
		if strings.Contains(input, "reboot") {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var out bytes.Buffer
		s := &Session{In: strings.NewReader(input), Out: &out, Plain: plain, User: "root"}
		err := sh.Interactive(ctx, s, "# ")
		s.Close()
		if err != nil && err != context.DeadlineExceeded {
			t.Fatalf("%q: %v", input, err)
		}
		if strings.Contains(out.String(), ": panic: ") {
			t.Fatalf("%q panicked: %s", input, out.String())
		}
	})
}
