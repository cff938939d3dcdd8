package xfer

import (
	"net"
	"testing"
	"time"
)

// TestRoundTrip runs both services on loopback and checks that a client
// sees matching digests, and that a corrupted stream is caught.
func TestRoundTrip(t *testing.T) {
	listen := func() net.Listener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	logf := func(f string, a ...any) { t.Logf(f, a...) }
	sink, src := listen(), listen()
	go ServeSink(sink, logf)
	go ServeSource(src, logf)
	const n = 3<<20 + 17
	up, err := Upload(sink.Addr().String(), n, 10*time.Second)
	if err != nil || up.Bytes != n {
		t.Fatalf("upload: %+v, %v", up, err)
	}
	down, err := Download(src.Addr().String(), n, 10*time.Second)
	if err != nil || down.Bytes != n {
		t.Fatalf("download: %+v, %v", down, err)
	}
	if _, err := Download(src.Addr().String(), MaxSource+1, 10*time.Second); err == nil {
		t.Fatal("source sent more than MaxSource")
	}

	// A sink that answers with a wrong digest is caught.
	bad := listen()
	go func() {
		c, err := bad.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 1<<16)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		c.Write(make([]byte, 32))
		c.Close()
	}()
	if _, err := Upload(bad.Addr().String(), 1<<20, 10*time.Second); err != ErrChecksum {
		t.Fatalf("wrong digest: got %v, want ErrChecksum", err)
	}
}
