// Package httpd is a small HTTP/1.1 server for status pages: it reads
// requests without bodies worth keeping, and sends answers a handler
// builds in memory, each with a Content-Length.
//
// It exists because net/http brings crypto/tls and crypto/x509 into every
// program that serves HTTP, about 1.5 MiB of a 16 MiB router's image, and
// no well-kept Go HTTP server avoids them; so this one is written here,
// after RFC 9112 (HTTP/1.1 messages) and RFC 9110 (semantics).
//
// What it does: persistent connections (HTTP/1.1's default; HTTP/1.0
// ones when the client asks for keep-alive), pipelined requests answered in
// order, HEAD, request bodies up to Server.MaxBodyBytes read and thrown
// away, with a Content-Length or chunked (with 100 Continue to a client
// that expects it), net/http's four timeouts. What it refuses, answering with the
// status RFC 9112 names and closing: malformed request lines and header
// fields, obs-fold, HTTP/1.1 without Host, header sections over
// MaxHeaderBytes, other major versions, conflicting Content-Length,
// transfer codings other than chunked alone, malformed chunked bodies,
// trailer sections over MaxHeaderBytes, bodies over MaxBodyBytes,
// targets other than origin-form (absolute-form is taken by its path).
//
// Memory per connection: while it waits for a request a connection holds
// only its goroutine and a small struct (about 300 bytes); while it
// serves one it borrows a 1 KiB read buffer and the answer's buffer from
// a pool (a request's header section up to MaxHeaderBytes is gathered in
// a scratch buffer beside it).
package httpd

import (
	"errors"
	"net"
	"strings"
	"sync"
	"time"
)

// Handler answers one request by writing to w; the answer is sent once
// it returns. r's Header slice is reused for the connection's next
// request: a handler keeps copies, not r.
type Handler interface {
	ServeHTTPD(w ResponseWriter, r *Request)
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(w ResponseWriter, r *Request)

// ServeHTTPD calls f(w, r).
func (f HandlerFunc) ServeHTTPD(w ResponseWriter, r *Request) { f(w, r) }

// ResponseWriter builds one answer. The answer is buffered: nothing is
// sent before the handler returns, so WriteHeader and Header may be
// called in any order until then.
type ResponseWriter interface {
	// Header is the answer's header fields. Content-Length, Connection,
	// Date and Transfer-Encoding are the server's own and ignored here,
	// except "Connection: close", which closes after the answer.
	Header() *Header
	// WriteHeader sets the status code (default 200); the first call wins.
	WriteHeader(code int)
	// Write appends to the body; over Server.MaxAnswerBytes it fails
	// with ErrAnswerTooLarge and the client gets a 500 instead. The
	// server's ResponseWriter is also an io.StringWriter.
	Write(b []byte) (int, error)
}

// Header is an answer's header fields in the order they were set.
type Header struct {
	fields []Field
}

// Set replaces the fields called name with one of value.
func (h *Header) Set(name, value string) {
	h.Del(name)
	h.fields = append(h.fields, Field{name, value})
}

// Add adds a field, keeping those of the same name.
func (h *Header) Add(name, value string) { h.fields = append(h.fields, Field{name, value}) }

// Get returns the first value of name (compared without regard to case).
func (h *Header) Get(name string) string {
	for _, f := range h.fields {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// Del removes the fields called name.
func (h *Header) Del(name string) {
	kept := h.fields[:0]
	for _, f := range h.fields {
		if !strings.EqualFold(f.Name, name) {
			kept = append(kept, f)
		}
	}
	h.fields = kept
}

// Error answers code with msg as plain text.
func Error(w ResponseWriter, msg string, code int) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// NotFound answers 404.
func NotFound(w ResponseWriter, _ *Request) { Error(w, "404 page not found", StatusNotFound) }

// Errors from Serve and ResponseWriter.Write.
var (
	ErrServerClosed    = errors.New("httpd: server closed")
	ErrAnswerTooLarge  = errors.New("httpd: answer over MaxAnswerBytes")
	errHandlerPanicked = errors.New("httpd: handler panicked")
)

// Defaults for the Server's zero size fields.
const (
	DefaultMaxHeaderBytes = 8 << 10   // request line and header fields: a browser's GET takes under 1 KiB
	DefaultMaxBodyBytes   = 4 << 10   // a status page takes no bodies; small forms fit
	DefaultMaxAnswerBytes = 256 << 10 // status pages are a few KiB
)

// Server serves HTTP/1.1 on the connections of a listener. Its zero
// value serves with no timeouts and the default sizes; set Handler.
type Server struct {
	Handler Handler

	// Timeouts, as net/http's Server has them (zero: none): the request
	// line and header fields must arrive within ReadHeaderTimeout (zero:
	// ReadTimeout) and the whole request within ReadTimeout of its first
	// byte (of the connection's accept, for its first request); the
	// answer must be sent within WriteTimeout of the end of the request's
	// header section; a kept-alive connection waits IdleTimeout (zero:
	// ReadTimeout) for its next request. Deadlines on the connection
	// enforce them, so a client that trickles bytes (slowloris) is cut off.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration

	MaxHeaderBytes int // request line and header fields (zero: DefaultMaxHeaderBytes)
	MaxBodyBytes   int // request body read and discarded (zero: DefaultMaxBodyBytes); longer: 413
	MaxAnswerBytes int // answer body (zero: DefaultMaxAnswerBytes); longer: 500

	// Log, if set, receives handler panics, answers over MaxAnswerBytes
	// and accept errors.
	Log func(format string, args ...any)

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[*conn]struct{}
	wg     sync.WaitGroup
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDuration(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

// Serve accepts connections on ln and serves each in its goroutine until
// ln fails or Close is called; then it returns ErrServerClosed, once the
// connections Close closed have ended.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrServerClosed
	}
	if s.lns == nil {
		s.lns = map[net.Listener]struct{}{}
		s.conns = map[*conn]struct{}{}
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()

	var backoff time.Duration
	for {
		rwc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				s.wg.Wait()
				return ErrServerClosed
			}
			// Out of descriptors or memory: wait and retry as net/http
			// does (5 ms doubling to 1 s).
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("httpd: accept: %v; retrying in %v", err, backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		c := &conn{srv: s, rwc: rwc, accepted: time.Now()}
		c.req.RemoteAddr = rwc.RemoteAddr().String()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = rwc.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close closes the listeners and every open connection at once (answers
// being written are cut). Serve returns ErrServerClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var err error
	for ln := range s.lns {
		if e := ln.Close(); e != nil && err == nil {
			err = e
		}
	}
	for c := range s.conns {
		_ = c.rwc.Close()
	}
	return err
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}
