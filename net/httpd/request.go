package httpd

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Field is one header field of a request or an answer.
type Field struct {
	Name, Value string
}

// Request is one parsed request. Its strings share one allocation (the
// header section); the body, if any, has been read and discarded.
type Request struct {
	Method   string // "GET", "HEAD", ...
	Target   string // the request-target as sent
	Path     string // the path of Target (origin-form, or absolute-form's path), "*" for OPTIONS *
	RawQuery string // after '?', without it
	Proto    string // "HTTP/1.0" or "HTTP/1.1"
	Host     string // the Host field, or absolute-form's authority
	Header   []Field
	// ContentLength is the request body's length (discarded before the
	// handler runs); -1 for a chunked body, whose length is known only
	// once read.
	ContentLength int64
	RemoteAddr    string

	minor          int  // 0 or 1: HTTP/1.minor
	close          bool // the client asked to close after the answer
	expectContinue bool // the client waits for 100 (Continue) before its body
	chunked        bool // the body is sent in the chunked transfer coding
}

// Get returns the first value of the header field name, compared without
// regard to case (RFC 9110 §5.1), or "".
func (r *Request) Get(name string) string {
	for _, f := range r.Header {
		if strings.EqualFold(f.Name, name) {
			return f.Value
		}
	}
	return ""
}

// protoError is a request the server refuses: the answer's status and
// why. The connection is closed after answering it.
type protoError struct {
	code int
	why  string
}

func (e *protoError) Error() string { return strconv.Itoa(e.code) + " " + e.why }

func bad(why string) *protoError { return &protoError{StatusBadRequest, why} }

// errNoRequest: the connection ended cleanly between requests.
var errNoRequest = errors.New("httpd: connection closed between requests")

// maxEmptyLines is how many empty lines before a request line are skipped
// (RFC 9112 §2.2: "SHOULD ignore at least one empty line").
const maxEmptyLines = 4

// readRequest reads one request's request line and header section from
// br, at most limit bytes of them, into req (its Header slice reused).
// scratch collects the lines; it is returned, possibly grown, for reuse.
// Errors are *protoError for requests to refuse, errNoRequest for a clean
// end before any byte, or the connection's read error.
func readRequest(br *bufio.Reader, limit int, scratch []byte, req *Request) ([]byte, error) {
	*req = Request{Header: req.Header[:0], RemoteAddr: req.RemoteAddr}
	hdr := scratch[:0]
	// Line ends: offsets into hdr of each line's end (without CRLF).
	var ends [64]int
	lines := ends[:0]
	empty := 0
	for {
		start := len(hdr)
		var err error
		hdr, err = readLine(br, hdr, limit)
		if err != nil {
			if errors.Is(err, errTooLong) {
				if len(lines) == 0 {
					// RFC 9112 §3: a request-target longer than the
					// server wishes to parse gets 414.
					return hdr, &protoError{StatusURITooLong, "request line too long"}
				}
				return hdr, &protoError{StatusRequestHeaderFieldsTooLarge, "header section too large"}
			}
			if len(hdr) == 0 && len(lines) == 0 && errors.Is(err, errEOF) {
				return hdr, errNoRequest
			}
			if errors.Is(err, errEOF) || errors.Is(err, errBareCR) {
				return hdr, bad("incomplete or malformed line")
			}
			return hdr, err
		}
		if len(hdr) == start {
			if len(lines) == 0 {
				if empty++; empty > maxEmptyLines {
					return hdr, bad("empty lines before the request")
				}
				continue
			}
			break // end of the header section
		}
		lines = append(lines, len(hdr))
	}
	// One string for the whole section: every field of req points into it.
	s := string(hdr)
	if err := parseRequestLine(s[:lines[0]], req); err != nil {
		return hdr, err
	}
	prev := lines[0]
	for _, end := range lines[1:] {
		line := s[prev:end]
		prev = end
		f, err := parseField(line)
		if err != nil {
			return hdr, err
		}
		req.Header = append(req.Header, f)
	}
	return hdr, req.check()
}

var (
	errTooLong = errors.New("line over the limit")
	errEOF     = errors.New("unexpected end")
	errBareCR  = errors.New("bare CR")
)

// readLine appends one line from br to dst without its CRLF (or LF, RFC
// 9112 §2.2 allows a bare LF), failing once dst would grow over limit.
func readLine(br *bufio.Reader, dst []byte, limit int) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if len(dst)+len(chunk) > limit+2 || (err == bufio.ErrBufferFull && len(dst)+len(chunk) > limit) {
			return dst, errTooLong
		}
		dst = append(dst, chunk...)
		switch err {
		case nil:
			dst = dst[:len(dst)-1]
			if n := len(dst); n > 0 && dst[n-1] == '\r' {
				dst = dst[:n-1]
			}
			// RFC 9112 §2.2: a bare CR is invalid; reject it.
			if i := bytes.IndexByte(dst, '\r'); i >= 0 {
				return dst, errBareCR
			}
			if len(dst) > limit {
				return dst, errTooLong
			}
			return dst, nil
		case bufio.ErrBufferFull:
			continue
		default:
			if errors.Is(err, io.EOF) {
				return dst, errEOF
			}
			return dst, err
		}
	}
}

// parseRequestLine parses "method SP request-target SP HTTP-version"
// (RFC 9112 §3).
func parseRequestLine(line string, req *Request) error {
	m, rest, ok := strings.Cut(line, " ")
	if !ok || !isToken(m) {
		return bad("malformed request line")
	}
	target, proto, ok := strings.Cut(rest, " ")
	if !ok || target == "" || strings.IndexByte(proto, ' ') >= 0 {
		return bad("malformed request line")
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f {
			return bad("malformed request-target")
		}
	}
	req.Method, req.Target = m, target
	// HTTP-version = "HTTP" "/" DIGIT "." DIGIT (RFC 9112 §2.3), case-sensitive.
	if len(proto) != 8 || proto[:5] != "HTTP/" || !isDigit(proto[5]) || proto[6] != '.' || !isDigit(proto[7]) {
		return bad("malformed HTTP version")
	}
	if proto[5] != '1' {
		// A major version this server does not speak (RFC 9110 §15.6.6).
		return &protoError{StatusHTTPVersionNotSupported, "HTTP version not supported"}
	}
	// A higher minor version is compatible with 1.1 (RFC 9110 §2.5): the
	// answer is 1.1's.
	req.minor = 1
	req.Proto = "HTTP/1.1"
	if proto[7] == '0' {
		req.minor, req.Proto = 0, "HTTP/1.0"
	}
	return parseTarget(req)
}

// parseTarget splits the request-target (RFC 9112 §3.2): origin-form, or
// absolute-form (whose authority stands for Host, §3.2.2), or "*" for
// OPTIONS. Authority-form is for CONNECT, which this server refuses.
func parseTarget(req *Request) error {
	t := req.Target
	switch {
	case t[0] == '/':
	case t == "*" && req.Method == "OPTIONS":
		req.Path = "*"
		return nil
	case len(t) > 7 && strings.EqualFold(t[:7], "http://"), len(t) > 8 && strings.EqualFold(t[:8], "https://"):
		_, rest, _ := strings.Cut(t, "://")
		i := strings.IndexAny(rest, "/?")
		if i < 0 {
			i = len(rest)
		}
		if i == 0 || strings.IndexByte(rest[:i], '@') >= 0 {
			return bad("malformed absolute-form target")
		}
		req.Host, t = rest[:i], rest[i:]
		if t == "" || t[0] == '?' {
			// An empty path is "/" (RFC 3986 §6.2.3).
			req.Path = "/"
			if t != "" {
				req.RawQuery = t[1:]
			}
			return nil
		}
	default:
		return bad("request-target not in origin-form")
	}
	req.Path, req.RawQuery, _ = strings.Cut(t, "?")
	if i := strings.IndexByte(req.Path, '#'); i >= 0 {
		return bad("fragment in request-target")
	}
	return nil
}

// parseField parses "field-name: OWS field-value OWS" (RFC 9112 §5).
func parseField(line string) (Field, error) {
	if line[0] == ' ' || line[0] == '\t' {
		// obs-fold (RFC 9112 §5.2): a server may reject it with 400.
		return Field{}, bad("obsolete line folding")
	}
	name, value, ok := strings.Cut(line, ":")
	// No whitespace between name and colon (RFC 9112 §5.1: 400).
	if !ok || !isToken(name) {
		return Field{}, bad("malformed header field")
	}
	value = strings.Trim(value, " \t")
	for i := 0; i < len(value); i++ {
		// field-value: VCHAR, obs-text, SP, HTAB (RFC 9110 §5.5).
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return Field{}, bad("control character in a header field")
		}
	}
	return Field{name, value}, nil
}

// check applies the rules across fields: Host (RFC 9112 §3.2),
// Content-Length and Transfer-Encoding (§6), Connection (§9.3, §9.6).
func (req *Request) check() error {
	hosts, te, keepAlive := 0, "", false
	req.ContentLength = -1
	for _, f := range req.Header {
		switch {
		case strings.EqualFold(f.Name, "Host"):
			if hosts++; hosts > 1 {
				return bad("more than one Host field")
			}
			if req.Host == "" {
				req.Host = f.Value
			}
		case strings.EqualFold(f.Name, "Content-Length"):
			n, err := parseContentLength(f.Value)
			if err != nil || (req.ContentLength >= 0 && n != req.ContentLength) {
				return bad("invalid Content-Length")
			}
			req.ContentLength = n
		case strings.EqualFold(f.Name, "Transfer-Encoding"):
			// Several fields are one list (RFC 9110 §5.3).
			te += "," + f.Value
		case strings.EqualFold(f.Name, "Connection"):
			if hasToken(f.Value, "close") {
				req.close = true
			}
			keepAlive = keepAlive || hasToken(f.Value, "keep-alive")
		case strings.EqualFold(f.Name, "Expect"):
			// Other expectations may be ignored (RFC 9110 §10.1.1).
			req.expectContinue = req.minor == 1 && hasToken(f.Value, "100-continue")
		}
	}
	if req.minor == 1 && hosts == 0 {
		return bad("missing Host field")
	}
	if te != "" {
		// Both: a smuggling attempt (RFC 9112 §6.3 item 3, §6.1). TE in
		// HTTP/1.0 is faulty framing (§6.1).
		if req.ContentLength >= 0 || req.minor == 0 {
			return bad("Transfer-Encoding with Content-Length or in HTTP/1.0")
		}
		if err := checkCodings(te); err != nil {
			return err
		}
		req.chunked = true
		return nil
	}
	if req.ContentLength < 0 {
		req.ContentLength = 0
	}
	if req.minor == 0 && !keepAlive {
		// HTTP/1.0 closes after the answer unless the client asked for
		// its keep-alive (RFC 9112 §9.3, Appendix C.2.2).
		req.close = true
	}
	return nil
}

// maxContentLength bounds the digits parsed; anything longer is refused
// long before (MaxBodyBytes).
const maxContentLength = 1<<62 - 1

// parseContentLength parses 1*DIGIT, or a list of identical values (RFC
// 9112 §6.3 item 5 allows accepting "42, 42").
func parseContentLength(v string) (int64, error) {
	n := int64(-1)
	for _, part := range strings.Split(v, ",") {
		part = strings.Trim(part, " \t")
		if part == "" || len(part) > 18 {
			return 0, errors.New("bad")
		}
		var x int64
		for i := 0; i < len(part); i++ {
			if !isDigit(part[i]) {
				return 0, errors.New("bad")
			}
			x = x*10 + int64(part[i]-'0')
		}
		if x > maxContentLength || (n >= 0 && x != n) {
			return 0, errors.New("bad")
		}
		n = x
	}
	return n, nil
}

// checkCodings accepts a Transfer-Encoding list (with empty elements,
// RFC 9110 §5.6.1) that is "chunked" alone. The body is thrown away, but
// its framing must be known: chunked that is not the final coding leaves
// the length unknown (400, RFC 9112 §6.3 item 4), as does chunked twice
// (§7: a sender must not apply it more than once); any other coding this
// server does not implement (501, §6.1).
func checkCodings(list string) error {
	chunked, last, other := 0, "", ""
	for list != "" {
		var part string
		part, list, _ = strings.Cut(list, ",")
		if part = strings.Trim(part, " \t"); part == "" {
			continue
		}
		last = part
		if strings.EqualFold(part, "chunked") {
			chunked++
		} else if other == "" {
			other = part
		}
	}
	switch {
	case !strings.EqualFold(last, "chunked"):
		return bad("chunked is not the final transfer coding")
	case chunked > 1:
		return bad("chunked applied more than once")
	case other != "":
		return &protoError{StatusNotImplemented, "transfer coding not implemented"}
	}
	return nil
}

// hasToken reports whether the comma-separated list v holds tok, compared
// without regard to case.
func hasToken(v, tok string) bool {
	for v != "" {
		var part string
		part, v, _ = strings.Cut(v, ",")
		if strings.EqualFold(strings.Trim(part, " \t"), tok) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isToken reports whether s is a token: 1*tchar (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
