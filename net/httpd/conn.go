package httpd

import (
	"bufio"
	"errors"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sizes of a connection's borrowed buffers.
const (
	readBufSize = 1 << 10  // one bufio.Reader: a GET's header section fits
	flushAt     = 8 << 10  // pipelined answers are sent together up to this
	keepBufMax  = 16 << 10 // larger buffers go back to the garbage collector, not the pool
	// closeLinger is how long a closing connection drains what the client
	// still sends after its answer, so that closing with unread data does
	// not reset the connection before the client read the answer (net/http
	// waits the same 500 ms, "rstAvoidanceDelay").
	closeLinger = 500 * time.Millisecond
)

// bufs are the buffers a connection borrows while it serves a request.
type bufs struct {
	br      *bufio.Reader
	scratch []byte // the request's header section
	body    []byte // the answer's body being built
	out     []byte // answers ready to send
}

var bufPool = sync.Pool{New: func() any { return &bufs{br: bufio.NewReaderSize(nil, readBufSize)} }}

// conn is one client connection.
type conn struct {
	srv      *Server
	rwc      net.Conn
	accepted time.Time
	b        *bufs // nil while waiting for a request with nothing buffered
	// first is the byte that ended the wait for a request, read before
	// the buffers were borrowed; connReader returns it first.
	first    [1]byte
	hasFirst bool
	req      Request
	resp     response
}

// connReader is what the connection's bufio.Reader reads: the waiting
// byte, then the connection, sending the answers still held before
// blocking for more (a pipelining client may wait for them).
type connReader struct{ c *conn }

func (r connReader) Read(p []byte) (int, error) {
	c := r.c
	if c.hasFirst && len(p) > 0 {
		c.hasFirst = false
		p[0] = c.first[0]
		return 1, nil
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	return c.rwc.Read(p)
}

func (c *conn) borrow() {
	c.b = bufPool.Get().(*bufs)
	c.b.br.Reset(connReader{c})
}

func (c *conn) giveBack() {
	b := c.b
	if b == nil {
		return
	}
	c.b = nil
	// Drop the last request's strings too.
	clear(c.req.Header[:cap(c.req.Header)])
	clear(c.resp.header.fields[:cap(c.resp.header.fields)])
	c.req = Request{Header: c.req.Header[:0], RemoteAddr: c.req.RemoteAddr}
	b.br.Reset(nil)
	for _, s := range []*[]byte{&b.scratch, &b.body, &b.out} {
		if cap(*s) > keepBufMax {
			*s = nil
		}
		*s = (*s)[:0]
	}
	bufPool.Put(b)
}

func (c *conn) flush() error {
	if c.b == nil || len(c.b.out) == 0 {
		return nil
	}
	_, err := c.rwc.Write(c.b.out)
	c.b.out = c.b.out[:0]
	return err
}

func (c *conn) serve() {
	s := c.srv
	defer s.forget(c)
	defer func() { c.giveBack(); _ = c.rwc.Close() }()

	maxHeader := orDefault(s.MaxHeaderBytes, DefaultMaxHeaderBytes)
	maxBody := int64(orDefault(s.MaxBodyBytes, DefaultMaxBodyBytes))
	headerTimeout := orDuration(s.ReadHeaderTimeout, s.ReadTimeout)
	idleTimeout := orDuration(s.IdleTimeout, s.ReadTimeout)
	for first := true; ; first = false {
		// Between requests with nothing buffered the connection gives
		// its buffers back and waits for one byte.
		start := time.Now()
		if c.b == nil || c.b.br.Buffered() == 0 {
			if err := c.flush(); err != nil {
				return
			}
			c.giveBack()
			wait := deadline(start, idleTimeout)
			if first {
				wait = deadline(c.accepted, headerTimeout)
			}
			_ = c.rwc.SetReadDeadline(wait)
			n, err := c.rwc.Read(c.first[:])
			if err != nil {
				return
			}
			if n == 0 {
				continue
			}
			c.hasFirst = true
			c.borrow()
			start = time.Now()
		}
		t0 := start
		if first {
			t0 = c.accepted
		}
		_ = c.rwc.SetReadDeadline(deadline(t0, headerTimeout))
		var err error
		c.b.scratch, err = readRequest(c.b.br, maxHeader, c.b.scratch, &c.req)
		if err != nil {
			var pe *protoError
			if errors.As(err, &pe) {
				c.refuse(pe.code, pe.why)
			}
			return
		}
		_ = c.rwc.SetReadDeadline(deadline(t0, s.ReadTimeout))
		_ = c.rwc.SetWriteDeadline(deadline(time.Now(), s.WriteTimeout))
		if c.req.ContentLength > maxBody {
			c.refuse(StatusContentTooLarge, "request body too large")
			return
		}
		if c.req.expectContinue && (c.req.ContentLength > 0 || c.req.chunked) && c.b.br.Buffered() == 0 {
			// The client waits for this before sending its body (RFC
			// 9110 §10.1.1, §15.2.1).
			c.b.out = append(c.b.out, "HTTP/1.1 100 Continue\r\n\r\n"...)
		}
		if c.req.chunked {
			c.b.scratch, err = discardChunked(c.b.br, c.b.scratch, maxHeader, maxBody)
			if err != nil {
				var pe *protoError
				if errors.As(err, &pe) {
					c.refuse(pe.code, pe.why)
				}
				return
			}
		} else if _, err := c.b.br.Discard(int(c.req.ContentLength)); err != nil {
			return
		}
		keep := c.answer()
		if !keep {
			c.closeGently()
			return
		}
		if len(c.b.out) >= flushAt {
			if err := c.flush(); err != nil {
				return
			}
		}
	}
}

// deadline is from+d, or no deadline for d <= 0.
func deadline(from time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return from.Add(d)
}

// refuse answers a request the server will not serve and closes.
func (c *conn) refuse(code int, why string) {
	_ = c.rwc.SetWriteDeadline(time.Now().Add(closeLinger))
	c.resp.reset(c, &c.req, 0)
	Error(&c.resp, why, code)
	if c.req.Method != "HEAD" {
		c.req.Method = "GET" // the request line may not have been parsed
	}
	c.b.out = c.resp.appendAnswer(c.b.out, false)
	c.closeGently()
}

// closeGently sends what is held, shuts the sending side and drains what
// the client still sends for up to closeLinger, so the client reads its
// answer before the connection closes.
func (c *conn) closeGently() {
	if err := c.flush(); err != nil {
		return
	}
	cw, ok := c.rwc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	_ = c.rwc.SetReadDeadline(time.Now().Add(closeLinger))
	for {
		if _, err := c.b.br.Discard(readBufSize); err != nil {
			return
		}
	}
}

// answer runs the handler for c.req and appends its answer to c.b.out;
// it reports whether the connection stays open.
func (c *conn) answer() (keep bool) {
	s := c.srv
	w := &c.resp
	w.reset(c, &c.req, orDefault(s.MaxAnswerBytes, DefaultMaxAnswerBytes))
	if err := c.runHandler(); err != nil {
		// The handler's answer is lost: answer 500 and close.
		w.reset(c, &c.req, 0)
		Error(w, StatusText(StatusInternalServerError), StatusInternalServerError)
		c.b.out = w.appendAnswer(c.b.out, false)
		return false
	}
	keep = !c.req.close && !hasToken(w.header.Get("Connection"), "close")
	c.b.out = w.appendAnswer(c.b.out, keep)
	return keep
}

// runHandler runs the handler, turning a panic into an error.
func (c *conn) runHandler() (err error) {
	s := c.srv
	defer func() {
		if p := recover(); p != nil {
			s.logf("httpd: handler panic serving %s %s for %s: %v\n%s", c.req.Method, c.req.Path, c.req.RemoteAddr, p, debug.Stack())
			err = errHandlerPanicked
		}
	}()
	h := s.Handler
	if h == nil {
		h = HandlerFunc(NotFound)
	}
	h.ServeHTTPD(&c.resp, &c.req)
	if c.resp.tooLarge {
		s.logf("httpd: answer to %s %s over %d bytes", c.req.Method, c.req.Path, c.resp.limit)
		return ErrAnswerTooLarge
	}
	return nil
}

// response is the ResponseWriter of one request.
type response struct {
	c        *conn
	req      *Request
	header   Header
	code     int
	limit    int
	tooLarge bool
}

func (w *response) reset(c *conn, req *Request, limit int) {
	clear(w.header.fields)
	*w = response{c: c, req: req, header: Header{fields: w.header.fields[:0]}, limit: limit}
	c.b.body = c.b.body[:0]
}

func (w *response) Header() *Header { return &w.header }

func (w *response) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *response) Write(p []byte) (int, error) {
	b := &w.c.b.body
	if w.limit > 0 && len(*b)+len(p) > w.limit {
		w.tooLarge = true
		return 0, ErrAnswerTooLarge
	}
	*b = append(*b, p...)
	return len(p), nil
}

// WriteString is Write without converting s (io.WriteString uses it).
func (w *response) WriteString(s string) (int, error) {
	b := &w.c.b.body
	if w.limit > 0 && len(*b)+len(s) > w.limit {
		w.tooLarge = true
		return 0, ErrAnswerTooLarge
	}
	*b = append(*b, s...)
	return len(s), nil
}

// imfFixdate is the Date field's format (RFC 9110 §5.6.7).
const imfFixdate = "Mon, 02 Jan 2006 15:04:05 GMT"

// appendAnswer appends the status line, fields and body (RFC 9112 §4,
// §6) to out.
func (w *response) appendAnswer(out []byte, keep bool) []byte {
	code := w.code
	if code == 0 {
		code = StatusOK
	}
	if code < 200 || code > 999 {
		// No interim answers here (1xx): the handler's answer is an error.
		code = StatusInternalServerError
	}
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, ' ')
	out = append(out, StatusText(code)...)
	out = append(out, "\r\n"...)
	for _, f := range w.header.fields {
		if !isToken(f.Name) || isServerField(f.Name) {
			continue
		}
		out = append(out, f.Name...)
		out = append(out, ": "...)
		out = appendFieldValue(out, f.Value)
		out = append(out, "\r\n"...)
	}
	out = append(out, "Date: "...)
	out = time.Now().UTC().AppendFormat(out, imfFixdate)
	out = append(out, "\r\n"...)
	body := w.c.b.body
	// 204 and 304 have no body (RFC 9110 §6.4.1) and 204 no
	// Content-Length (§8.6).
	noBody := code == StatusNoContent || code == StatusNotModified
	if !noBody {
		out = append(out, "Content-Length: "...)
		out = strconv.AppendInt(out, int64(len(body)), 10)
		out = append(out, "\r\n"...)
	}
	switch {
	case !keep:
		out = append(out, "Connection: close\r\n"...)
	case w.req.minor == 0:
		// An HTTP/1.0 client keeps the connection only if told so
		// (RFC 9112 Appendix C.2.2).
		out = append(out, "Connection: keep-alive\r\n"...)
	}
	out = append(out, "\r\n"...)
	// A HEAD answer has the fields a GET would, without the body (RFC
	// 9110 §9.3.2).
	if !noBody && w.req.Method != "HEAD" {
		out = append(out, body...)
	}
	return out
}

// isServerField reports the fields the server writes itself.
func isServerField(name string) bool {
	switch len(name) {
	case 4:
		return strings.EqualFold(name, "Date")
	case 10:
		return strings.EqualFold(name, "Connection")
	case 14:
		return strings.EqualFold(name, "Content-Length")
	case 17:
		return strings.EqualFold(name, "Transfer-Encoding")
	}
	return false
}

// appendFieldValue appends v with control characters (CR, LF: a handler
// must not be able to split the answer) replaced by spaces.
func appendFieldValue(out []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < ' ' && c != '\t') || c == 0x7f {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}
