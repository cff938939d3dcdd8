package httpd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// page is the test's status page: 2 KiB of HTML.
var page = "<!doctype html>\n<html><body>\n" + strings.Repeat("<p>counter 1234567890</p>\n", 76) + "</body></html>\n"

func testHandler(w ResponseWriter, r *Request) {
	switch r.Path {
	case "/":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	case "/echo":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s ?%s host=%s proto=%s ua=%s", r.Method, r.Path, r.RawQuery, r.Host, r.Proto, r.Get("user-agent"))
	case "/panic":
		panic("test handler panic")
	case "/big":
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case "/close":
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "bye")
	case "/nocontent":
		w.WriteHeader(StatusNoContent)
	case "/split":
		w.Header().Set("X-Evil", "a\r\nSet-Cookie: x=1")
		_, _ = io.WriteString(w, "ok")
	default:
		NotFound(w, r)
	}
}

type testServer struct {
	*Server
	addr   string
	served chan error
	logs   *logBuf
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer serves testHandler (unless s has a Handler) on a loopback port.
func startServer(t *testing.T, s *Server) *testServer {
	t.Helper()
	if s.Handler == nil {
		s.Handler = HandlerFunc(testHandler)
	}
	logs := &logBuf{}
	s.Log = logs.logf
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, addr: ln.Addr().String(), served: make(chan error, 1), logs: logs}
	go func() { ts.served <- s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.Close()
		select {
		case err := <-ts.served:
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return ts
}

func (ts *testServer) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// closedByServer reports whether the server has closed c (reading gives
// EOF or a reset within wait).
func closedByServer(c net.Conn, r io.Reader, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := r.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestNetHTTPClientKeepAlive(t *testing.T) {
	ts := startServer(t, &Server{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	reused := 0
	for i := 0; i < 5; i++ {
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
			if ci.Reused {
				reused++
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", "http://"+ts.addr+"/", nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || string(body) != page {
			t.Fatalf("GET /: %v %s, %d bytes", err, resp.Status, len(body))
		}
		if ct, cl := resp.Header.Get("Content-Type"), resp.ContentLength; ct != "text/html; charset=utf-8" || cl != int64(len(page)) {
			t.Fatalf("Content-Type %q, Content-Length %d", ct, cl)
		}
		if _, err := http.ParseTime(resp.Header.Get("Date")); err != nil {
			t.Fatalf("Date %q: %v", resp.Header.Get("Date"), err)
		}
	}
	if reused != 4 {
		t.Fatalf("%d of 4 requests reused the connection", reused)
	}
	resp, err := client.Get("http://" + ts.addr + "/echo?a=b")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "GET /echo ?a=b host=" + ts.addr + " proto=HTTP/1.1 ua=Go-http-client/1.1"; string(body) != want {
		t.Fatalf("got %q, want %q", body, want)
	}
	resp, err = client.Get("http://" + ts.addr + "/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("/nothing: %s", resp.Status)
	}
}

// curl fetches two URLs over one connection, and HEAD answers like GET
// without a body.
func TestCurl(t *testing.T) {
	ts := startServer(t, &Server{})
	out, err := exec.Command("curl", "-sS", "--http1.1", "-o", "/dev/null", "-o", "/dev/null",
		"-w", "%{http_code} %{size_download} %{num_connects}\n",
		"http://"+ts.addr+"/", "http://"+ts.addr+"/echo").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	want := fmt.Sprintf("200 %d 1\n200 %d 0\n", len(page), len("GET /echo ? host="+ts.addr+" proto=HTTP/1.1 ua=curl/"))
	lines := strings.Split(string(out), "\n")
	if len(lines) != 3 || lines[0]+"\n" != strings.Split(want, "\n")[0]+"\n" || !strings.HasPrefix(lines[1], "200 ") || !strings.HasSuffix(lines[1], " 0") {
		t.Fatalf("curl: %q, want like %q (second transfer on the same connection)", out, want)
	}
	out, err = exec.Command("curl", "-sS", "-I", "http://"+ts.addr+"/").CombinedOutput()
	if err != nil {
		t.Fatalf("curl -I: %v\n%s", err, out)
	}
	if s := string(out); !strings.HasPrefix(s, "HTTP/1.1 200 OK\r\n") || !strings.Contains(s, "Content-Length: "+strconv.Itoa(len(page))+"\r\n") {
		t.Fatalf("curl -I:\n%s", out)
	}
	out, err = exec.Command("curl", "-sS", "--http1.0", "-i", "http://"+ts.addr+"/echo").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Connection: close\r\n") || !strings.HasSuffix(string(out), "proto=HTTP/1.0 ua=curl/"+curlVersion(t)) {
		t.Fatalf("curl --http1.0: %v\n%s", err, out)
	}
	// HTTP/1.0 with keep-alive: curl reuses the connection.
	out, err = exec.Command("curl", "-sS", "--http1.0", "-H", "Connection: keep-alive", "-o", "/dev/null", "-o", "/dev/null",
		"-w", "%{http_code} %{num_connects}\n", "http://"+ts.addr+"/", "http://"+ts.addr+"/echo").CombinedOutput()
	if err != nil || string(out) != "200 1\n200 0\n" {
		t.Fatalf("curl --http1.0 keep-alive: %v\n%q", err, out)
	}
}

func curlVersion(t *testing.T) string {
	out, err := exec.Command("curl", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(out))
	if len(f) < 2 {
		t.Fatalf("curl --version: %q", out)
	}
	return f[1]
}

// Three requests in one write get three answers, in order, on one
// connection; a HEAD among them has GET's Content-Length and no body, and
// a POST's body is skipped.
func TestPipelining(t *testing.T) {
	ts := startServer(t, &Server{})
	c := ts.dial(t)
	reqs := "GET /echo?1 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /echo?2 HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world" +
		"GET /echo?3 HTTP/1.1\r\nHost: a\r\n\r\n"
	if _, err := io.WriteString(c, reqs); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	for _, want := range []string{"GET /echo ?1 ", "", "POST /echo ?2 ", "GET /echo ?3 "} {
		method := "GET"
		if want == "" {
			method = "HEAD"
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if method == "HEAD" {
			if resp.ContentLength != int64(len(page)) || len(body) != 0 {
				t.Fatalf("HEAD: Content-Length %d, %d bytes of body", resp.ContentLength, len(body))
			}
			continue
		}
		if !strings.HasPrefix(string(body), want) {
			t.Fatalf("got %q, want %q...", body, want)
		}
	}
	if closedByServer(c, br, 100*time.Millisecond) {
		t.Fatal("keep-alive connection closed")
	}
}

// Bad requests get their status, then the connection closes.
func TestBadInput(t *testing.T) {
	ts := startServer(t, &Server{MaxHeaderBytes: 1 << 10, MaxBodyBytes: 100})
	long := strings.Repeat("a", 2000)
	for _, tc := range []struct {
		name, req string
		code      int
	}{
		{"no version", "GET /\r\n\r\n", 400},
		{"lowercase version", "GET / http/1.1\r\nHost: a\r\n\r\n", 400},
		{"two spaces", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"space in target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"bad method", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"bare CR", "GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", 400},
		{"no colon", "GET / HTTP/1.1\r\nHost: a\r\nJunk\r\n\r\n", 400},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", 400},
		{"NUL in value", "GET / HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n", 400},
		{"missing Host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"header section too large", "GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + long + "\r\n\r\n", 431},
		{"many fields", "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-A: b\r\n", 200) + "\r\n", 431},
		{"request line too long", "GET /" + long + " HTTP/1.1\r\nHost: a\r\n\r\n", 414},
		{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
		{"HTTP/0.9", "GET / HTTP/0.9\r\n\r\n", 505},
		{"bad Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400},
		{"negative Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
		{"conflicting Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
		{"conflicting Content-Length list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 2\r\n\r\nab", 400},
		{"huge Content-Length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400},
		{"unknown coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
		{"chunked not last", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400},
		{"chunked twice", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"bad chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n", 400},
		{"chunk size overflow", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("f", 17) + "\r\n", 400},
		{"chunk longer than its size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", 400},
		{"chunked body too large", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + strings.Repeat("x", 64) + "\r\n40\r\n" + strings.Repeat("x", 64) + "\r\n0\r\n\r\n", 413},
		{"malformed trailer", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nNo colon\r\n\r\n", 400},
		{"trailer section too large", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("X-A: b\r\n", 200) + "\r\n", 431},
		{"truncated chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", 400},
		{"TE and CL", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", 400},
		{"TE in 1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"body too large", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n" + strings.Repeat("x", 101), 413},
		{"authority-form", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"relative target", "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"asterisk not OPTIONS", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"userinfo", "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"too many empty lines", "\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"truncated", "GET / HTTP/1.1\r\nHost: a\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.dial(t)
			if _, err := io.WriteString(c, tc.req); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(tc.name, "truncated") {
				_ = c.(*net.TCPConn).CloseWrite()
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != tc.code || !resp.Close {
				t.Fatalf("%s (close %v), want %d and close", resp.Status, resp.Close, tc.code)
			}
			if !closedByServer(c, br, 2*time.Second) {
				t.Fatal("connection still open after the refusal")
			}
		})
	}
}

// Requests the server accepts though they are unusual.
func TestTolerated(t *testing.T) {
	ts := startServer(t, &Server{})
	for _, tc := range []struct{ name, req, want string }{
		{"empty line first", "\r\nGET /echo HTTP/1.1\r\nHost: a\r\n\r\n", "GET /echo ? host=a proto=HTTP/1.1 ua="},
		{"bare LF", "GET /echo HTTP/1.1\nHost: a\n\n", "GET /echo ? host=a proto=HTTP/1.1 ua="},
		{"absolute-form", "GET http://b.lan/echo?q HTTP/1.1\r\nHost: a\r\n\r\n", "GET /echo ?q host=b.lan proto=HTTP/1.1 ua="},
		{"HTTP/1.9 as 1.1", "GET /echo HTTP/1.9\r\nHost: a\r\n\r\n", "GET /echo ? host=a proto=HTTP/1.1 ua="},
		{"1.0 without Host", "GET /echo HTTP/1.0\r\n\r\n", "GET /echo ? host= proto=HTTP/1.0 ua="},
		{"chunked", "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "POST /echo ? host=a proto=HTTP/1.1 ua="},
		{"chunked with extensions and trailer", "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: , Chunked\r\n\r\nA ; name=\"v\"\r\n0123456789\r\n1\r\nx\r\n0;last\r\nX-Sum: 1\r\n\r\n", "POST /echo ? host=a proto=HTTP/1.1 ua="},
		{"same Content-Length twice", "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-length: 2, 2\r\n\r\nab", "POST /echo ? host=a proto=HTTP/1.1 ua="},
		{"OWS and case", "GET /echo HTTP/1.1\r\nhOsT:a\r\nUser-Agent: \t x y \t\r\n\r\n", "GET /echo ? host=a proto=HTTP/1.1 ua=x y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.dial(t)
			_, _ = io.WriteString(c, tc.req)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != tc.want {
				t.Fatalf("%s %q, want %q", resp.Status, body, tc.want)
			}
		})
	}
}

// TestHTTP10KeepAlive: an HTTP/1.0 client that asks for keep-alive gets
// it, said in the answer, and its next request is answered on the same
// connection; without it the connection closes (TestConnectionClose).
func TestHTTP10KeepAlive(t *testing.T) {
	ts := startServer(t, &Server{})
	c := ts.dial(t)
	br := bufio.NewReader(c)
	for i := range 3 {
		_, _ = io.WriteString(c, "GET /echo HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Close || resp.Header.Get("Connection") != "keep-alive" || !strings.HasPrefix(string(body), "GET /echo") {
			t.Fatalf("request %d: %s, Connection %q, %q", i, resp.Status, resp.Header.Get("Connection"), body)
		}
	}
	_, _ = io.WriteString(c, "GET /echo HTTP/1.0\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if !resp.Close || !closedByServer(c, br, 2*time.Second) {
		t.Fatal("HTTP/1.0 without keep-alive: connection not closed")
	}
}

func TestConnectionClose(t *testing.T) {
	ts := startServer(t, &Server{})
	for _, tc := range []struct{ name, req string }{
		{"client close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Close\r\n\r\n"},
		{"HTTP/1.0", "GET / HTTP/1.0\r\n\r\n"},
		{"handler close", "GET /close HTTP/1.1\r\nHost: a\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ts.dial(t)
			_, _ = io.WriteString(c, tc.req)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != 200 || !resp.Close || !closedByServer(c, br, 2*time.Second) {
				t.Fatalf("%s, close %v: want 200 and the connection closed", resp.Status, resp.Close)
			}
		})
	}
}

// A handler panic is logged and answered 500, the connection closed; the
// server goes on serving.
func TestHandlerPanic(t *testing.T) {
	ts := startServer(t, &Server{})
	c := ts.dial(t)
	_, _ = io.WriteString(c, "GET /panic HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 500 || !resp.Close || !closedByServer(c, br, 2*time.Second) {
		t.Fatalf("%s, close %v", resp.Status, resp.Close)
	}
	if !strings.Contains(ts.logs.String(), "test handler panic") {
		t.Fatalf("panic not logged: %q", ts.logs.String())
	}
	if resp, err := http.Get("http://" + ts.addr + "/"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the panic: %v", err)
	}
}

func TestAnswerTooLarge(t *testing.T) {
	ts := startServer(t, &Server{})
	resp, err := http.Get("http://" + ts.addr + "/big")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !resp.Close || len(body) > 100 {
		t.Fatalf("%s, close %v, %d bytes", resp.Status, resp.Close, len(body))
	}
	if !strings.Contains(ts.logs.String(), "over 262144 bytes") {
		t.Fatalf("not logged: %q", ts.logs.String())
	}
}

// Answers without a body, and a handler's field cannot split the answer.
func TestAnswerFields(t *testing.T) {
	ts := startServer(t, &Server{})
	c := ts.dial(t)
	_, _ = io.WriteString(c, "GET /nocontent HTTP/1.1\r\nHost: a\r\n\r\nGET /split HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 204 || resp.Header.Get("Content-Length") != "" {
		t.Fatalf("%s %v", resp.Status, resp.Header)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Set-Cookie") != "" || resp.Header.Get("X-Evil") != "a  Set-Cookie: x=1" {
		t.Fatalf("fields %v", resp.Header)
	}
}

// A client that trickles its request headers (slowloris) is cut off
// after ReadHeaderTimeout, though each byte comes well within it.
func TestHeaderTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := startServer(t, &Server{ReadHeaderTimeout: timeout, IdleTimeout: 10 * time.Second})
	c := ts.dial(t)
	start := time.Now()
	req := "GET / HTTP/1.1\r\nHost: a\r\nX-Slow: " + strings.Repeat("z", 100)
	var err error
	for i := 0; i < len(req) && err == nil; i++ {
		_, err = c.Write([]byte{req[i]})
		time.Sleep(20 * time.Millisecond)
	}
	d := time.Since(start)
	if err == nil {
		t.Fatalf("still sending after %v", d)
	}
	if d < timeout || d > timeout+time.Second {
		t.Fatalf("cut off after %v, want about %v", d, timeout)
	}
}

// A kept-alive connection closes after IdleTimeout without a request; a
// request within it keeps the connection.
func TestIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	ts := startServer(t, &Server{IdleTimeout: idle, ReadHeaderTimeout: 5 * time.Second})
	c := ts.dial(t)
	br := bufio.NewReader(c)
	get := func() {
		t.Helper()
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	get()
	time.Sleep(idle / 2)
	get()
	start := time.Now()
	if !closedByServer(c, br, 5*idle) {
		t.Fatal("idle connection not closed")
	}
	if d := time.Since(start); d < idle*3/4 || d > idle+time.Second {
		t.Fatalf("closed after %v idle, want %v", d, idle)
	}
}

// Close closes the listener and open connections; Serve returns.
func TestClose(t *testing.T) {
	s := &Server{Handler: HandlerFunc(testHandler)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	// One idle after a request, one mid-request, one never sent anything.
	_, _ = io.WriteString(conns[0], "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(conns[0])
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatal(err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	_, _ = io.WriteString(conns[1], "GET / HTTP/1.1\r\n")
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if !errors.Is(err, ErrServerClosed) {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return")
	}
	for i, c := range conns {
		var r io.Reader = c
		if i == 0 {
			r = br
		}
		if !closedByServer(c, r, 2*time.Second) {
			t.Fatalf("connection %d still open", i)
		}
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("listener still accepting")
	}
	if err := s.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
}

// Idle keep-alive connections hold no buffers: 200 of them grow the heap
// by well under a KiB each (the goroutine stacks are not heap).
func TestIdleConnectionMemory(t *testing.T) {
	ts := startServer(t, &Server{})
	const n = 200
	conns := make([]net.Conn, n)
	buf := make([]byte, 4096)
	want := "\r\n\r\n" + page
	getOnce := func(c net.Conn) {
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		got := 0
		var acc []byte
		for !bytes.HasSuffix(acc, []byte(want)) {
			k, err := c.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			acc = append(acc, buf[:k]...)
			got += k
		}
	}
	base := heapInUse()
	for i := range conns {
		conns[i] = ts.dial(t)
		getOnce(conns[i])
	}
	time.Sleep(100 * time.Millisecond)
	grown := int64(heapInUse()) - int64(base)
	t.Logf("%d idle keep-alive connections: heap grew %d bytes (%d per connection, client side included)", n, grown, grown/n)
	// Both ends' net.Conn, the server's conn and the test's bookkeeping
	// come to 1.5 to 2.5 KiB; the buffers of one request
	// (1 KiB reader, 2.3 KiB body, 2.5 KiB answer) would add 6 KiB (9.7 KiB
	// per connection measured when they were kept).
	if grown/n > 4<<10 {
		t.Fatalf("%d bytes of heap per idle connection", grown/n)
	}
}

// A client that expects 100 (Continue) gets it before sending its body.
func TestExpectContinue(t *testing.T) {
	ts := startServer(t, &Server{})
	c := ts.dial(t)
	_, _ = io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("%q %v, want 100 Continue", line, err)
	}
	if empty, err := br.ReadString('\n'); err != nil || empty != "\r\n" {
		t.Fatalf("%q %v after 100 Continue", empty, err)
	}
	_, _ = io.WriteString(c, "hello")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "POST /echo") {
		t.Fatalf("%s %q", resp.Status, body)
	}
	// curl waits up to --expect100-timeout for it.
	start := time.Now()
	out, err := exec.Command("curl", "-sS", "--expect100-timeout", "5", "-H", "Expect: 100-continue",
		"--data-binary", strings.Repeat("x", 3000), "http://"+ts.addr+"/echo").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "POST /echo") {
		t.Fatalf("curl: %v %q", err, out)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("curl took %v: no 100 Continue", d)
	}
}

// TestChunkedFromNetHTTP: Go's HTTP client sends a body of unknown length
// chunked (with Expect: 100-continue when asked); the server reads it
// through, answers, and keeps the connection for the next request, and
// refuses one over MaxBodyBytes with 413.
func TestChunkedFromNetHTTP(t *testing.T) {
	ts := startServer(t, &Server{MaxBodyBytes: 64 << 10})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, ExpectContinueTimeout: 5 * time.Second}}
	defer client.CloseIdleConnections()
	for i, size := range []int{0, 1, 5000, 64 << 10} {
		// A reader of unknown length: net/http sends it chunked.
		body := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte{'x'}, size)))
		req, err := http.NewRequest("POST", "http://"+ts.addr+"/echo", body)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			req.Header.Set("Expect", "100-continue")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(got), "POST /echo") || resp.Close {
			t.Fatalf("%d bytes: %s %q (close %v)", size, resp.Status, got, resp.Close)
		}
		if len(resp.TransferEncoding) != 0 {
			t.Fatalf("answer sent %v", resp.TransferEncoding)
		}
	}
	req, _ := http.NewRequest("POST", "http://"+ts.addr+"/echo", io.MultiReader(bytes.NewReader(make([]byte, 64<<10+1))))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != StatusContentTooLarge {
		t.Fatalf("body over the limit: %s", resp.Status)
	}
}

// TestParseChunkSize: hex digits, then nothing or extensions.
func TestParseChunkSize(t *testing.T) {
	for _, c := range []struct {
		line string
		n    int64
		ok   bool
	}{
		{"0", 0, true}, {"1a", 26, true}, {"FF", 255, true}, {"10;x=y", 16, true}, {"10 \t; x", 16, true},
		{"7ffffffffffffff", 0x7ffffffffffffff, true},
		{"", 0, false}, {";x", 0, false}, {"x", 0, false}, {"1 2", 0, false}, {"-1", 0, false},
		{"0x10", 0, false}, {"1000000000000000", 0, false},
	} {
		n, ok := parseChunkSize([]byte(c.line))
		if ok != c.ok || (ok && n != c.n) {
			t.Errorf("parseChunkSize(%q) = %d, %v; want %d, %v", c.line, n, ok, c.n, c.ok)
		}
	}
}
