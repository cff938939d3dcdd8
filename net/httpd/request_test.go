package httpd

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

func parse(data []byte, limit int) (*Request, error) {
	var req Request
	_, err := readRequest(bufio.NewReaderSize(bytes.NewReader(data), readBufSize), limit, nil, &req)
	return &req, err
}

// A request read back from its own serialisation parses the same.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: 192.168.1.1\r\n\r\n",
		"GET /status.json?x=1 HTTP/1.1\r\nHost: a\r\nUser-Agent: curl/8\r\nAccept: */*\r\n\r\n",
		"HEAD / HTTP/1.0\r\n\r\n",
		"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc",
		"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET http://h/p?q HTTP/1.1\r\nHost: a\r\n\r\n",
		"\r\nGET / HTTP/1.1\nHost: a\n\n",
		"GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",
		"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
		"GET /" + strings.Repeat("a", 2000) + " HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\nX: \x00\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := parse(data, 1<<10)
		if err != nil {
			var pe *protoError
			if errors.As(err, &pe) && StatusText(pe.code) == "" {
				t.Fatalf("refused with unknown status %d", pe.code)
			}
			return
		}
		if !isToken(req.Method) || (req.Proto != "HTTP/1.1" && req.Proto != "HTTP/1.0") ||
			(req.Path != "*" && !strings.HasPrefix(req.Path, "/")) || (req.ContentLength < 0) != req.chunked ||
			(req.Proto == "HTTP/1.1" && !hasField(req, "Host")) {
			t.Fatalf("accepted %q as %+v", data, req)
		}
		var b strings.Builder
		b.WriteString(req.Method + " " + req.Target + " " + req.Proto + "\r\n")
		for _, f := range req.Header {
			b.WriteString(f.Name + ": " + f.Value + "\r\n")
		}
		b.WriteString("\r\n")
		again, err := parse([]byte(b.String()), 1<<20)
		if err != nil {
			t.Fatalf("%q parsed, its serialisation %q did not: %v", data, b.String(), err)
		}
		if again.Method != req.Method || again.Path != req.Path || again.RawQuery != req.RawQuery ||
			again.Host != req.Host || again.Proto != req.Proto || again.ContentLength != req.ContentLength ||
			again.close != req.close || len(again.Header) != len(req.Header) {
			t.Fatalf("%q → %+v, again %+v", data, req, again)
		}
		for i := range req.Header {
			if again.Header[i] != req.Header[i] {
				t.Fatalf("field %d: %v, again %v", i, req.Header[i], again.Header[i])
			}
		}
	})
}

// The limit counts the request line and fields, not their line ends.
func TestHeaderLimit(t *testing.T) {
	req := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	exact := len("GET / HTTP/1.1") + len("Host: a")
	if _, err := parse([]byte(req), exact); err != nil {
		t.Fatalf("limit %d: %v", exact, err)
	}
	var pe *protoError
	if _, err := parse([]byte(req), exact-1); !errors.As(err, &pe) || pe.code != StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("limit %d: %v", exact-1, err)
	}
}

func hasField(r *Request, name string) bool {
	for _, f := range r.Header {
		if strings.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}
