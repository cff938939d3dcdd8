package httpd

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// memConn is a connection whose client sent data and then shut its
// sending side: reads give data, then EOF; writes are kept.
type memConn struct {
	r      *bytes.Reader
	mu     sync.Mutex
	out    bytes.Buffer
	closed chan struct{}
	once   sync.Once
}

func (c *memConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}
func (c *memConn) Close() error                     { c.once.Do(func() { close(c.closed) }); return nil }
func (c *memConn) LocalAddr() net.Addr              { return pipeAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return pipeAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzServe: whatever a client sends, the server answers with well-formed
// HTTP/1.1 answers, at most one per request it read, and closes.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\nHEAD / HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabcGET /x HTTP/1.0\r\n\r\n",
		"GET /panic HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET /nocontent HTTP/1.1\r\nHost: a\r\n\r\nGET /close HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 9999\r\n\r\n",
		"GET / HTTP/1.1\r\n b\r\n\r\n",
		"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3;x\r\nabc\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &memConn{r: bytes.NewReader(data), closed: make(chan struct{})}
		var methods []string // of the requests handled, in order
		s := &Server{Handler: HandlerFunc(func(w ResponseWriter, r *Request) {
			methods = append(methods, r.Method)
			testHandler(w, r)
		}), MaxHeaderBytes: 512, MaxBodyBytes: 64}
		ln := &pipeListener{conns: make(chan net.Conn, 1), closed: make(chan struct{})}
		ln.conns <- c
		done := make(chan error, 1)
		go func() { done <- s.Serve(ln) }()
		select {
		case <-c.closed:
		case <-time.After(10 * time.Second):
			t.Fatal("connection not closed at the end of the input")
		}
		_ = s.Close()
		<-done
		c.mu.Lock()
		out := c.out.Bytes()
		c.mu.Unlock()
		// One answer per handled request, in order, then perhaps a
		// refusal (of a request whose method is not known here).
		br := bufio.NewReader(bytes.NewReader(out))
		for n := 0; ; {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			method := "GET"
			if n < len(methods) {
				method = methods[n]
			}
			resp, err := http.ReadResponse(br, &http.Request{Method: method})
			if err != nil {
				t.Fatalf("answer %d to %q unreadable: %v\n%q", n, data, err, out)
			}
			if resp.StatusCode == 100 {
				continue
			}
			n++
			_, err = io.Copy(io.Discard, resp.Body)
			if n > len(methods) {
				if _, more := br.Peek(1); more != io.EOF || (err != nil && resp.StatusCode < 400) {
					t.Fatalf("answer %d to %q: more than one refusal: %q", n, data, out)
				}
				break
			}
			if err != nil {
				t.Fatalf("answer %d to %q: body: %v\n%q", n, data, err, out)
			}
		}
	})
}
