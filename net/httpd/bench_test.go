package httpd

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// pipeListener hands out one end of a net.Pipe, then waits for Close.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// BenchmarkGet: keep-alive GETs of a 2 KiB page over net.Pipe, the
// server's side of a status page hit (the client side is a fixed read).
func BenchmarkGet(b *testing.B) {
	s := &Server{Handler: HandlerFunc(testHandler)}
	ln := &pipeListener{conns: make(chan net.Conn, 1), closed: make(chan struct{})}
	client, server := net.Pipe()
	ln.conns <- server
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	defer func() {
		_ = s.Close()
		<-done
		client.Close()
	}()
	req := []byte("GET / HTTP/1.1\r\nHost: 192.168.1.1\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	// The answer's length: status line and fields (fixed length, Date
	// included) and the page.
	if _, err := client.Write(req); err != nil {
		b.Fatal(err)
	}
	head := readHead(b, client)
	n := len(head) + len(page)
	if !bytes.Contains(head, []byte("Content-Length: "+strconv.Itoa(len(page))+"\r\n")) {
		b.Fatalf("answer head %q", head)
	}
	if _, err := io.ReadFull(client, make([]byte, len(page))); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, n)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := client.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(client, buf); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if !bytes.HasSuffix(buf, []byte(page)) {
		b.Fatalf("last answer %q", buf)
	}
}

func readHead(b *testing.B, c net.Conn) []byte {
	var head []byte
	one := make([]byte, 1)
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if _, err := c.Read(one); err != nil {
			b.Fatal(err)
		}
		head = append(head, one[0])
	}
	return head
}
