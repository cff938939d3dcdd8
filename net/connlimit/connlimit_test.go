package connlimit_test

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gowrt/gowrt/net/connlimit"
)

// server accepts from a limited loopback listener and keeps every
// connection it is given until the test closes them.
type server struct {
	ln    *connlimit.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func newServer(t *testing.T, cfg connlimit.Config) *server {
	t.Helper()
	inner, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := connlimit.New(inner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-s.done
		s.closeAll()
	})
	return s
}

func (s *server) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
		_ = c.Close() // a second Close must not give the slot back twice
	}
	s.conns = nil
}

// dial connects from the loopback address src (127.0.0.0/8 is all local
// on Linux, so every test source is a distinct address).
func dial(t *testing.T, s *server, src string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp4", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedByServer reports whether the server closed c (read EOF or reset)
// rather than keeping it open.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPerSource: one address gets PerSource connections; the next ones
// are closed at once and counted; another address is still served.
func TestPerSource(t *testing.T) {
	s := newServer(t, connlimit.Config{Total: 100, PerSource: 3})
	var cs []net.Conn
	for i := 0; i < 3; i++ {
		cs = append(cs, dial(t, s, "127.0.0.2"))
	}
	waitFor(t, "3 connections held", func() bool { return s.held() == 3 })
	for i := 0; i < 4; i++ {
		if c := dial(t, s, "127.0.0.2"); !closedByServer(c) {
			t.Fatalf("connection %d over the per-source limit kept open", 4+i)
		}
	}
	for _, c := range cs {
		if closedByServer(c) {
			t.Fatal("a connection within the limit was closed")
		}
	}
	other := dial(t, s, "127.0.0.3")
	waitFor(t, "the other source's connection", func() bool { return s.held() == 4 })
	if closedByServer(other) {
		t.Fatal("a second source was refused")
	}
	st := s.ln.Stats()
	if st.Open != 4 || st.Accepted != 4 || st.RejectedPerSource != 4 || st.RejectedTotal != 0 || st.Rejected() != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// TestTotal: the total limit holds across sources, and closing a
// connection gives its slot back (once, however often it is closed).
func TestTotal(t *testing.T) {
	s := newServer(t, connlimit.Config{Total: 4, PerSource: 3})
	srcs := []string{"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.4"}
	for _, src := range srcs {
		dial(t, s, src)
	}
	waitFor(t, "4 connections held", func() bool { return s.held() == 4 })
	if c := dial(t, s, "127.0.0.5"); !closedByServer(c) {
		t.Fatal("a connection over the total limit was kept open")
	}
	if st := s.ln.Stats(); st.RejectedTotal != 1 || st.Open != 4 {
		t.Fatalf("stats %+v", st)
	}
	s.closeAll()
	if st := s.ln.Stats(); st.Open != 0 {
		t.Fatalf("%d open after closing them all", st.Open)
	}
	for i := 0; i < 3; i++ {
		dial(t, s, "127.0.0.5")
	}
	waitFor(t, "slots given back", func() bool { return s.held() == 3 })
	if st := s.ln.Stats(); st.Open != 3 || st.Accepted != 7 || st.Rejected() != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestConcurrent: many clients from few sources at once never push the
// open count past the limits (run with -race).
func TestConcurrent(t *testing.T) {
	s := newServer(t, connlimit.Config{Total: 10, PerSource: 4})
	var wg sync.WaitGroup
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%4))}}
			c, err := d.Dial("tcp4", s.ln.Addr().String())
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, c) // until the test or the limit closes it
			_ = c.Close()
		}()
	}
	waitFor(t, "every dial answered", func() bool {
		st := s.ln.Stats()
		return st.Accepted+st.Rejected() == 60
	})
	st := s.ln.Stats()
	if st.Open > 10 || st.Accepted != 10 || st.Rejected() != 50 {
		t.Fatalf("stats %+v: want 10 accepted, 50 rejected", st)
	}
	s.closeAll()
	wg.Wait()
}

func TestConfig(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []connlimit.Config{{}, {Total: 1}, {PerSource: 1}, {Total: -1, PerSource: 1}} {
		if _, err := connlimit.New(ln, c); !errors.Is(err, connlimit.ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// A remote address of an unexpected kind is still limited (all such
// connections share one source).
func TestUnknownSource(t *testing.T) {
	inner := &fakeListener{conns: make(chan net.Conn, 8)}
	ln, err := connlimit.New(inner, connlimit.Config{Total: 10, PerSource: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		a, b := net.Pipe() // net.Pipe's addresses are "pipe"
		defer a.Close()
		defer b.Close()
		inner.conns <- a
	}
	close(inner.conns)
	n := 0
	for {
		if _, err := ln.Accept(); err != nil {
			break
		}
		n++
	}
	if st := ln.Stats(); n != 2 || st.RejectedPerSource != 1 {
		t.Fatalf("accepted %d, stats %+v: want 2 accepted, 1 rejected", n, st)
	}
}

type fakeListener struct{ conns chan net.Conn }

func (l *fakeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l *fakeListener) Close() error { return nil }
func (l *fakeListener) Addr() net.Addr {
	return net.TCPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:1"))
}
